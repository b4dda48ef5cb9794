// The end of an LTI Dynamic Registration: tell the LMS page that opened
// this one (a window or a frame) that the registration is done, as LTI
// Dynamic Registration asks; the LMS then closes it.
(() => {
  "use strict";
  const to = window.opener || (window.parent !== window ? window.parent : null);
  if (to) to.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
})();
