"""Reports of a run (spec/reports.md): each output one :class:`~.reporters.Reporter`
(:mod:`.reporters`: terminal, JSON Lines, GitHub, JUnit, the kept last report, the HTML
page); the JSON Lines report and the terminal view (:mod:`.suite`), JUnit XML
(:mod:`.junit`), GitHub annotations (:mod:`.github`), the results matrix (:mod:`.matrix`),
text of one result (:mod:`.result_text`), repeated runs (:mod:`.repeat_view`), two reports
compared (:mod:`.report_diff`), the compliance page (:mod:`.compliance_html`,
``templates/``) and printing (:mod:`.terminal`, :mod:`.folder`).
"""
