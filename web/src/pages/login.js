// The login form, shown when the agent answers 401: the token goes in a POST body to
// /api/v1/login, which sets an HttpOnly, SameSite=Strict cookie. The token is never put
// in a URL and never kept by the page.
import { ApiError, AuthError, postJSON } from '../api.js';

export function loginPage(root, onDone) {
  root.innerHTML = `
    <section class="card login">
      <h2>Log in</h2>
      <p class="muted">This agent needs its token (the contents of the file given to <code>eacgm serve --token-file</code>).</p>
      <form id="login-form" method="post" action="#" autocomplete="off">
        <label for="token">Token</label>
        <input id="token" name="token" type="password" required autofocus />
        <button type="submit">Log in</button>
        <p id="login-error" class="bad" role="alert"></p>
      </form>
    </section>`;
  const form = root.querySelector('#login-form');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = form.querySelector('#token');
    const error = form.querySelector('#login-error');
    error.textContent = '';
    try {
      await postJSON('/api/v1/login', { token: input.value });
      input.value = '';
      onDone();
    } catch (err) {
      input.value = '';
      error.textContent = err instanceof AuthError ? 'Wrong token.' : err instanceof ApiError ? err.message : `Login failed: ${err.message}`;
    }
  });
}
