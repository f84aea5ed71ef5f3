// irsample assess: keyboard shortcuts for the judging page (no build step, no libraries).
// A digit submits that grade with the note; s skips; u undoes; n focuses the note; Esc leaves it.
(function () {
  "use strict";
  var busy = false;
  function press(key) {
    var button = document.querySelector('button[data-key="' + key + '"]');
    if (!button || busy) { return false; }
    busy = true;  // one submission per page: a held-down key cannot judge twice
    button.form.requestSubmit(button);
    return true;
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT");
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
})();
