(function () {
  "use strict";
  var tip = document.getElementById("tip");
  function show(el, x, y) {
    tip.textContent = el.getAttribute("data-tip");
    tip.hidden = false;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.max(4, Math.min(x + 12, window.innerWidth - w - 4)) + "px";
    tip.style.top = Math.max(4, y - h - 10 < 0 ? y + 16 : y - h - 10) + "px";
  }
  document.addEventListener("mouseover", function (e) {
    var el = e.target.closest ? e.target.closest("[data-tip]") : null;
    if (el && el.getAttribute("data-tip")) { show(el, e.clientX, e.clientY); } else { tip.hidden = true; }
  });
  document.addEventListener("mousemove", function (e) {
    if (!tip.hidden) { var el = e.target.closest && e.target.closest("[data-tip]"); if (el) { show(el, e.clientX, e.clientY); } }
  });
  function detail(el) {
    var fig = el.closest("figure");
    if (fig) { fig.querySelector(".detail").textContent = el.getAttribute("data-detail"); }
  }
  document.addEventListener("click", function (e) {
    var el = e.target.closest ? e.target.closest("[data-detail]") : null;
    if (el) { detail(el); }
    var t = e.target.closest ? e.target.closest("[data-tip]") : null;
    if (t && e.pointerType === "touch") { show(t, e.clientX, e.clientY); }
  });
  document.addEventListener("keydown", function (e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.hasAttribute && e.target.hasAttribute("data-detail")) { detail(e.target); }
  });
  function key(s) { var v = parseFloat(s.replace(/^⚑ /, "")); return isNaN(v) || !/^[⚑ ]*[-+0-9.]/.test(s) ? null : v; }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.querySelectorAll("th");
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col] ? a.cells[col].textContent : "", y = b.cells[col] ? b.cells[col].textContent : "";
          var kx = key(x), ky = key(y), c;
          if (kx !== null && ky !== null) { c = kx - ky; } else if (kx !== null) { c = -1; } else if (ky !== null) { c = 1; } else { c = x < y ? -1 : x > y ? 1 : 0; }
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
