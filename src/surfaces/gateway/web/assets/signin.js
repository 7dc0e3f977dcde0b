// The sign-in page: trades the one-time code `egirl pair` printed for a
// device cookie (HttpOnly: this script never sees the token), then opens
// the app. The server's one-line error is shown as text.

const form = document.querySelector('#signin');
const code = document.querySelector('#code');
const device = document.querySelector('#device');
const submit = document.querySelector('#signin-submit');
const error = document.querySelector('#signin-error');

/** A name for this browser that `egirl devices list` can show. */
function guessName() {
  const ua = navigator.userAgent || '';
  if (/iPhone/.test(ua)) return 'iPhone';
  if (/iPad/.test(ua)) return 'iPad';
  if (/Android/.test(ua)) return /Mobile/.test(ua) ? 'Android phone' : 'Android tablet';
  if (/Mac OS X/.test(ua)) return 'Mac browser';
  if (/Windows/.test(ua)) return 'Windows browser';
  if (/Linux/.test(ua)) return 'Linux browser';
  return 'browser';
}

function show(message) {
  // Control characters out; the text stays text.
  error.textContent = String(message).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 300);
  error.hidden = false;
}

async function pair(event) {
  event.preventDefault();
  error.hidden = true;
  const body = {
    code: code.value.trim(),
    device: device.value.trim() || guessName(),
  };
  if (!body.code) {
    show('type the code that `egirl pair` printed');
    code.focus();
    return;
  }
  submit.disabled = true;
  try {
    const res = await fetch('/api/pair', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    });
    if (res.ok) {
      location.assign('/');
      return;
    }
    let message = '';
    try {
      const reply = await res.json();
      if (reply && typeof reply.error === 'string') message = reply.error;
    } catch {
      /* not JSON: say the status */
    }
    if (!message) {
      if (res.status === 429) message = 'too many tries: wait a minute and try again';
      else if (res.status === 401) message = 'wrong or expired code: run `egirl pair` again';
      else message = `refused (HTTP ${res.status})`;
    }
    show(message);
    code.select();
  } catch {
    show('the daemon does not answer: is `egirl serve` running?');
  } finally {
    submit.disabled = false;
  }
}

device.placeholder = guessName();
form.addEventListener('submit', pair);
