/**
 * What the OpenID provider's pages share (consent.html,
 * notice.html, docs/protocol.md §8 "Consent"): they work without
 * scripts (plain forms); these show the app's logo when it has one and keep
 * a form from being sent twice while the browser goes on to the app.
 */

/** The app's logo (the body's `data-logo`, https only) in `#app-logo`; the holder hides again if the picture fails. */
export function showAppLogo() {
  const logo = document.body.dataset.logo ?? '';
  const holder = document.getElementById('app-logo');
  if (holder === null || !/^https:\/\//.test(logo)) return;
  const image = document.createElement('img');
  image.src = logo;
  image.alt = '';
  image.width = 56;
  image.height = 56;
  image.addEventListener('error', () => {
    holder.hidden = true;
  });
  holder.append(image);
  holder.hidden = false;
}

/** Disables a posted form's buttons (its own and those naming it) once it is sent. */
export function sendFormsOnce() {
  for (const form of document.querySelectorAll('form[method="post"]')) {
    form.addEventListener('submit', () => {
      // After this tick, so the pressed button's name and value still go with the form.
      setTimeout(() => {
        for (const button of form.querySelectorAll('button')) button.disabled = true;
        for (const button of document.querySelectorAll(`button[form="${form.id}"]`)) {
          if (button instanceof HTMLButtonElement) button.disabled = true;
        }
      });
    });
  }
}
