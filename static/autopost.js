// The deep-linking answer page: it posts the signed answer back to the
// LMS at once, as the protocol expects. Without JavaScript the page's
// button does the same.
(() => {
  "use strict";
  const form = document.getElementById("deep-link-return");
  if (form) form.submit();
})();
