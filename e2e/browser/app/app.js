// A minimal single-page app following the app-author rules for the kernel's
// browser login (docs/developers/frontend.md): the result page strips ?ticket,
// ?pendingLink and ?bindTicket with history.replaceState before any
// request; every call is credentials:'include'; a state-changing call sends
// X-Smart-CSRF with the smart_csrf cookie when there is one; with a binding
// challenge (APP_CONFIG.challenge) the verifier lives in sessionStorage of
// the tab that started the login and goes in the body of exchange, claim
// and bind completion. #status is what the browser suite reads:
// loading | working | anonymous | logged-in:<account> | pending-link:<provider>
// | claimed:<provider> | bound:<provider> | refreshed:<account> | error:<code>
(function () {
  'use strict';
  const cfg = window.APP_CONFIG || { apiBase: '', challenge: false, provider: 'oidc' };
  const store = window.sessionStorage;
  const $ = (id) => document.getElementById(id);
  const external = '/api/v1/auth/external';
  // In cookie session mode the access token lives in memory only; a reload
  // recovers it with a silent refresh (the refresh token is the HttpOnly
  // smart_rt cookie).
  let memAccess = '';

  function setStatus(s) {
    const el = $('status');
    el.textContent = s;
    el.dataset.state = s.split(':')[0];
  }
  function show(section) {
    $('login').hidden = section !== 'login';
    $('personal').hidden = section !== 'personal';
  }
  function cookie(name) {
    for (const part of document.cookie.split('; ')) {
      const i = part.indexOf('=');
      if (i > 0 && part.slice(0, i) === name) return decodeURIComponent(part.slice(i + 1));
    }
    return '';
  }
  const cookieSession = () => store.getItem('cookieSession') === '1';
  const accessToken = () => (cookieSession() ? memAccess : store.getItem('accessToken') || '');

  async function call(method, path, body, retried) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const at = accessToken();
    if (at) headers.Authorization = 'Bearer ' + at;
    if (method !== 'GET' && method !== 'HEAD') {
      const csrf = cookie('smart_csrf');
      if (csrf) headers['X-Smart-CSRF'] = csrf;
    }
    const res = await fetch(cfg.apiBase + path, {
      method, headers, credentials: 'include',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let env;
    try {
      env = await res.json();
    } catch (e) {
      env = { code: -res.status, msgKey: 'http', data: null };
    }
    env.http = res.status;
    // An expired access token: refresh once and replay.
    if (res.status === 401 && !retried && path !== '/api/v1/auth/refresh' && (cookieSession() || store.getItem('refreshToken'))) {
      const r = await refresh();
      if (r.code === 0) return call(method, path, body, true);
    }
    return env;
  }

  function setSession(d) {
    const cookieMode = d.sessionMode === 'cookie' || d.csrfRequired === true ||
      (d.sessionMode === undefined && d.csrfRequired === undefined && !d.refreshToken && !!d.accessToken);
    if (cookieMode) {
      memAccess = d.accessToken;
      store.setItem('cookieSession', '1');
      store.removeItem('accessToken');
      store.removeItem('refreshToken');
    } else {
      store.removeItem('cookieSession');
      store.setItem('accessToken', d.accessToken);
      store.setItem('refreshToken', d.refreshToken);
    }
  }
  function clearSession() {
    memAccess = '';
    for (const k of ['cookieSession', 'accessToken', 'refreshToken']) store.removeItem(k);
  }

  async function refresh() {
    const body = { refreshToken: cookieSession() ? '' : store.getItem('refreshToken') || '' };
    const r = await call('POST', '/api/v1/auth/refresh', body, true);
    if (r.code === 0 && r.data) setSession(r.data);
    return r;
  }

  // whoami answers the account of the current session, recovering a
  // cookie session after a reload, or '' when there is none.
  async function whoami() {
    if (cookieSession() && !memAccess) {
      const r = await refresh();
      if (r.code !== 0) return { error: r.code };
    }
    if (!accessToken()) return {};
    const r = await call('GET', '/api/v1/personal/profile');
    if (r.code !== 0) return { error: r.code };
    return { account: r.data.account };
  }

  function fail(r) {
    setStatus('error:' + r.code);
  }

  function randomVerifier() {
    const b = new Uint8Array(48);
    crypto.getRandomValues(b);
    return b64url(b);
  }
  function b64url(bytes) {
    let s = '';
    for (const x of bytes) s += String.fromCharCode(x);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  async function s256(verifier) {
    const data = new TextEncoder().encode(verifier);
    if (window.crypto && crypto.subtle) {
      return b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', data)));
    }
    return b64url(window.sha256(data));
  }
  // newChallenge keeps a fresh verifier in this tab's sessionStorage and
  // returns its S256 challenge ('' without the challenge).
  async function newChallenge() {
    if (!cfg.challenge) return '';
    const v = randomVerifier();
    store.setItem('bindingVerifier', v);
    return s256(v);
  }
  const verifier = () => store.getItem('bindingVerifier') || undefined;

  async function startSSO() {
    setStatus('working');
    const c = await newChallenge();
    const q = c ? '?bindingChallenge=' + encodeURIComponent(c) : '';
    window.location.assign(cfg.apiBase + external + '/' + cfg.provider + '/authorize' + q);
  }

  async function passwordLogin() {
    setStatus('working');
    const r = await call('POST', '/api/v1/auth/login', { account: $('account').value, password: $('password').value });
    if (r.code !== 0) return fail(r);
    setSession(r.data);
    const pending = store.getItem('pendingLink');
    if (pending) {
      const c = await call('POST', external + '/pending-link/claim', { pendingLink: pending, bindingVerifier: verifier() });
      store.removeItem('pendingLink');
      store.removeItem('bindingVerifier');
      if (c.code !== 0) return fail(c);
      return setStatus('claimed:' + (store.getItem('pendingProvider') || cfg.provider));
    }
    await personal();
  }

  async function personal() {
    const me = await whoami();
    if (me.error) return fail({ code: me.error });
    if (!me.account) {
      show('login');
      return setStatus('anonymous');
    }
    $('who').textContent = me.account;
    const b = await call('GET', external + '/bindings');
    $('bindings').textContent = b.code === 0 ? b.data.map((x) => x.provider).join(',') : 'error:' + b.code;
    show('personal');
    setStatus('logged-in:' + me.account);
  }

  async function startBind() {
    setStatus('working');
    const c = await newChallenge();
    const r = await call('POST', external + '/' + cfg.provider + '/bind', c ? { bindingChallenge: c } : {});
    if (r.code !== 0) return fail(r);
    window.location.assign(r.data.authorizeUrl);
  }

  async function doRefresh() {
    setStatus('working');
    const r = await refresh();
    if (r.code !== 0) return fail(r);
    setStatus('refreshed:' + r.data.account);
  }

  async function logout() {
    setStatus('working');
    const r = await call('POST', '/api/v1/auth/logout', {});
    clearSession();
    if (r.code !== 0) return fail(r);
    show('login');
    setStatus('anonymous');
  }

  // resultPage handles the kernel's redirect after the provider. The
  // one-time values leave the address bar (and so the history, a reload
  // and any Referer) before the first request.
  async function resultPage() {
    const q = new URLSearchParams(window.location.search);
    window.history.replaceState(null, '', window.location.pathname);
    setStatus('working');
    if (q.has('error')) {
      store.removeItem('bindingVerifier');
      show('login');
      return setStatus('error:' + q.get('error'));
    }
    if (q.has('ticket')) {
      const r = await call('POST', external + '/exchange', { ticket: q.get('ticket'), bindingVerifier: verifier() });
      store.removeItem('bindingVerifier');
      if (r.code !== 0) {
        show('login');
        return fail(r);
      }
      setSession(r.data);
      return personal();
    }
    if (q.has('pendingLink')) {
      store.setItem('pendingLink', q.get('pendingLink'));
      store.setItem('pendingProvider', q.get('provider') || cfg.provider);
      $('login-title').textContent = 'Log in to link ' + (q.get('displayName') || q.get('provider'));
      show('login');
      return setStatus('pending-link:' + (q.get('provider') || cfg.provider));
    }
    if (q.has('bindTicket')) {
      const r = await call('POST', external + '/bind/complete', { bindTicket: q.get('bindTicket'), bindingVerifier: verifier() });
      store.removeItem('bindingVerifier');
      if (r.code !== 0) return fail(r);
      return setStatus('bound:' + (q.get('provider') || cfg.provider));
    }
    if (q.has('bind')) {
      return setStatus('bound:' + q.get('bind'));
    }
    // A reload of the (already stripped) result page: show the session.
    return personal();
  }

  $('login-button').addEventListener('click', () => passwordLogin().catch((e) => setStatus('error:js ' + e)));
  $('sso-button').addEventListener('click', () => startSSO().catch((e) => setStatus('error:js ' + e)));
  $('bind-button').addEventListener('click', () => startBind().catch((e) => setStatus('error:js ' + e)));
  $('refresh-button').addEventListener('click', () => doRefresh().catch((e) => setStatus('error:js ' + e)));
  $('logout-button').addEventListener('click', () => logout().catch((e) => setStatus('error:js ' + e)));

  // The suite calls these from page.evaluate for the CSRF checks.
  window.testApp = { call, cookie, refresh };

  const page = window.location.pathname === '/oauth/callback' ? resultPage : personal;
  page().catch((e) => setStatus('error:js ' + e));
})();
