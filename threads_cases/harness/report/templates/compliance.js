(function () {
  "use strict";
  // Filters of the compliance page. Without this script the form stays hidden and the
  // whole page shows; with it, checkboxes choose the verdicts and implementations shown.
  var form = document.getElementById("filters");
  if (!form) {
    return;
  }
  var status = document.getElementById("filter-status");
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[type=checkbox]"));

  function wanted(name) {
    var out = {};
    boxes.forEach(function (box) {
      if (box.name === name && box.checked) {
        out[box.value] = true;
      }
    });
    return out;
  }

  function each(selector, fn) {
    Array.prototype.forEach.call(document.querySelectorAll(selector), fn);
  }

  function apply() {
    var verdicts = wanted("verdict");
    var impls = wanted("impl");
    function shown(el) {
      var impl = el.getAttribute("data-impl");
      var verdict = el.getAttribute("data-verdict");
      return (impl === null || impls[impl] === true) &&
        (verdict === null || verdicts[verdict] === true);
    }
    each(".matrix [data-impl]", function (cell) {
      cell.hidden = impls[cell.getAttribute("data-impl")] !== true;
    });
    var rows = 0;
    var rowsShown = 0;
    each(".matrix tbody tr", function (row) {
      var any = false;
      Array.prototype.forEach.call(row.querySelectorAll("td[data-verdict]"), function (cell) {
        any = any || shown(cell);
      });
      row.hidden = !any;
      rows += 1;
      rowsShown += any ? 1 : 0;
    });
    var details = 0;
    var detailsShown = 0;
    each("#details article[data-impl]", function (item) {
      item.hidden = !shown(item);
      details += 1;
      detailsShown += item.hidden ? 0 : 1;
    });
    each("#expected tbody tr, #changes tbody tr", function (item) {
      item.hidden = !shown(item);
    });
    status.textContent = "Showing " + rowsShown + " of " + rows + " cases and " +
      detailsShown + " of " + details + " detailed results.";
  }

  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
  });
  Array.prototype.forEach.call(form.querySelectorAll("button[data-preset]"), function (button) {
    button.addEventListener("click", function () {
      var all = button.getAttribute("data-preset") === "all";
      boxes.forEach(function (box) {
        box.checked = all || box.name !== "verdict" ||
          (box.value !== "pass" && box.value !== "skip");
      });
      apply();
    });
  });
  form.hidden = false;
  apply();
}());
