// The waiting page without reloads. It checks the line every few seconds
// (GET <ticket>/status, which never uses the ticket up), updates the
// estimate in a polite live region only when its words change, never
// moves focus, and loads the ticket's page once the launch has ended: the
// editor, or the page that says what went wrong. Without this script the
// page reloads itself (a meta refresh inside <noscript>).
(() => {
  "use strict";
  const page = document.getElementById("launch-waiting");
  if (!page) return;
  const say = document.getElementById("wait-status");
  const bar = document.getElementById("wait-progress");
  let every = 3000;
  const check = async () => {
    try {
      const answer = await fetch(page.dataset.status, { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
      const s = answer.ok ? await answer.json() : { ready: true };
      if (s.ready) {
        location.replace(page.dataset.next);
        return;
      }
      if (say && s.say && say.textContent !== s.say) say.textContent = s.say; // the live region speaks
      if (bar && s.total) {
        bar.max = s.total;
        bar.value = s.waited;
      }
      if (s.every) every = s.every;
    } catch (e) {
      // A failed check (the network, a restart) is tried again.
    }
    setTimeout(check, every);
  };
  setTimeout(check, every);
})();
