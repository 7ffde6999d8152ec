// A quiet reporter for `node --test`: a dot per passing test, the details of each failure,
// and one summary line. Used by `npm test` (the TAP/spec output of 500+ tests hides failures).
import { inspect } from "node:util";

export default async function* summaryReporter(source) {
  const failures = [];
  const summary = {};
  let column = 0;
  const names = []; // the names of the enclosing suites, by nesting level
  for await (const event of source) {
    const data = event.data ?? {};
    if (event.type === "test:start") {
      names[data.nesting] = data.name;
      names.length = data.nesting + 1;
      continue;
    }
    if (event.type === "test:diagnostic" && data.nesting === 0) {
      const [key, value] = String(data.message).split(" ");
      if (key !== undefined && value !== undefined) summary[key] = value;
      continue;
    }
    if (event.type === "test:stderr" || event.type === "test:stdout") {
      continue; // shown with a failure only, through its error
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    if (data.details?.type === "suite") continue;
    const mark = event.type === "test:fail" ? "F" : data.skip ? "s" : data.todo ? "t" : ".";
    yield mark;
    column += 1;
    if (column === 80) {
      yield "\n";
      column = 0;
    }
    if (event.type === "test:fail" && !data.todo) {
      const where = data.file ? ` (${data.file}${data.line ? `:${data.line}` : ""})` : "";
      const path = [...names.slice(0, data.nesting), data.name].join(" > ");
      const error = data.details?.error;
      const cause = error?.cause ?? error;
      failures.push(`FAIL ${path}${where}\n${indent(inspect(cause, { depth: 6 }))}`);
    }
  }
  if (column) yield "\n";
  for (const failure of failures) yield `\n${failure}\n`;
  const seconds = (Number(summary.duration_ms ?? 0) / 1000).toFixed(1);
  yield (
    `\n${summary.tests ?? "?"} tests: ${summary.pass ?? "?"} pass, ${summary.fail ?? "?"} fail, ` +
    `${summary.skipped ?? 0} skipped, ${summary.todo ?? 0} todo, ` +
    `${summary.cancelled ?? 0} cancelled in ${seconds}s\n`
  );
}

function indent(text) {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
