// The page title's `(N) ` prefix while approvals wait, and the browser's
// Notification API when the user allowed it (asked from a button press:
// browsers ignore a request that no gesture made).

const BASE_TITLE = 'egirl';

export function setTitle(pending, session) {
  const prefix = pending > 0 ? `(${pending}) ` : '';
  document.title = `${prefix}${session ? `${session} · ` : ''}${BASE_TITLE}`;
}

export function notificationState() {
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.permission;
}

/** Asks for permission; call from a click handler. */
export async function askPermission() {
  if (typeof Notification === 'undefined') return 'unsupported';
  try {
    return await Notification.requestPermission();
  } catch {
    return Notification.permission;
  }
}

/** Shows a notification when permitted; a click brings the page forward. */
export function notify(title, body, tag) {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return null;
  try {
    const n = new Notification(title, { body, tag, silent: false });
    n.onclick = () => {
      window.focus();
      n.close();
    };
    return n;
  } catch {
    // Some mobile browsers only notify from a service worker: the title still says it.
    return null;
  }
}
