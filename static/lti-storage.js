// LTI client-side postMessage storage, inside the LMS's frame: keep the
// browser's key in the LMS's frame before going on to the LMS (put), or
// read it back and post the launch again with it (get). Messages go to
// the LMS's origin only, and only its answers are read.
(() => {
  "use strict";
  const page = document.getElementById("lti-storage");
  if (!page) return;
  const d = page.dataset;
  let target = null;
  try {
    target = d.target === "_parent" ? window.parent : window.parent.frames[d.target];
  } catch (e) {
    target = null;
  }
  const id = Math.random().toString(36).slice(2);
  const ask = (subject, extra, done) => {
    let answered = false;
    window.addEventListener("message", (e) => {
      const m = e.data || {};
      if (e.origin !== d.origin || m.message_id !== id || m.subject !== subject + ".response" || answered) return;
      answered = true;
      done(m);
    });
    if (!target || target === window) return done({});
    target.postMessage(Object.assign({ subject: subject, message_id: id, key: d.key }, extra), d.origin);
    setTimeout(() => { if (!answered) { answered = true; done({}); } }, 3000);
  };
  if (d.mode === "put") {
    ask("lti.put_data", { value: d.value }, () => location.replace(d.next));
  } else {
    ask("lti.get_data", {}, (m) => {
      const form = document.getElementById("lti-storage-form");
      form.elements.lti_storage_value.value = typeof m.value === "string" ? m.value : "";
      form.submit();
    });
  }
})();
