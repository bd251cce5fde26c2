// PersuArena view: reload pages of running runs, submit filter forms on
// change. Everything works without it.
(function () {
  var s = document.body.getAttribute("data-refresh");
  if (s) {
    setTimeout(function () { location.reload(); }, 1000 * Number(s));
  }
  document.querySelectorAll("form.filters select, form.filters input[type=checkbox]").forEach(function (el) {
    el.addEventListener("change", function () { el.form.submit(); });
  });
})();
