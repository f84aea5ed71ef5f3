// irsample assess: keyboard shortcuts, the lease heartbeat and small page helpers (no build
// step, no libraries). A digit submits that grade with the note; s skips; u undoes; n focuses
// the note; Esc leaves it. While the judging page is open it renews the lease on its document
// (POST /api/renew); if the document is no longer reserved, the grade buttons are disabled and
// a notice offers the next document. An hour without a key, click or scroll stops renewing, so
// an abandoned page frees its document.
(function () {
  "use strict";
  var busy = false;
  var lastActivity = Date.now();
  function press(key) {
    var button = document.querySelector('button[data-key="' + key + '"]:not([disabled])');
    if (!button || busy) { return false; }
    busy = true;  // one submission per page: a held-down key cannot judge twice
    button.form.requestSubmit(button);
    return true;
  }
  ["keydown", "pointerdown", "scroll", "touchstart"].forEach(function (name) {
    document.addEventListener(name, function () { lastActivity = Date.now(); }, true);
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" ||
                            target.tagName === "SELECT");
    if (typing) {
      if (event.key === "Escape") { target.blur(); event.preventDefault(); }
      return;
    }
    if (event.key === "n") {
      var note = document.getElementById("note");
      if (note) { note.focus(); event.preventDefault(); }
      return;
    }
    if (press(event.key)) { event.preventDefault(); }
  });
  function lost() {
    var notice = document.getElementById("lost");
    if (notice) { notice.hidden = false; }
    document.querySelectorAll("#judge button.grade").forEach(function (b) { b.disabled = true; });
  }
  function heartbeat(form) {
    var seconds = parseFloat(form.getAttribute("data-lease"));
    var every = Math.max(0.5, Math.min(seconds / 3, 60)) * 1000;
    var timer = setInterval(function () {
      if (Date.now() - lastActivity > 3600 * 1000) { clearInterval(timer); return; }
      fetch(form.getAttribute("data-renew"), {
        method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json",
                  "X-CSRF-Token": form.getAttribute("data-csrf")},
        body: JSON.stringify({item: parseInt(form.getAttribute("data-item"), 10),
                              ticket: form.getAttribute("data-ticket")})
      }).then(function (response) {
        if (response.status === 409 || response.status === 403 || response.status === 404) {
          clearInterval(timer);
          lost();
        }
      }).catch(function () { /* the server is away: try again next time */ });
    }, every);
  }
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("judge");
    if (form && form.getAttribute("data-renew")) { heartbeat(form); }
    var more = document.getElementById("topic-more");
    if (more && window.matchMedia("(max-width: 700px)").matches) { more.open = false; }
    var estimates = document.getElementById("estimates");
    if (estimates && estimates.getAttribute("data-computing") === "1" &&
        !document.querySelector(".flash")) {  // a shown link is not reloaded away
      setTimeout(function () { window.location.replace("/admin"); }, 2000);
    }
  });
})();
