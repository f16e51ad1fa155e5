// The UI's one script, served as /assets/ui.js: a run's page follows the run
// (server-sent events say when it changed; the page fetches itself again and
// swaps its content), and the action buttons post with the per-start token.
// Plain DOM, no framework; pages work without it, minus the live updates.

// ASCII only (\u escapes in its strings): the CLI bundle's chunks are kept ASCII (scripts/bundle-cli.mjs),
// and a String.raw template is the one place the bundler cannot escape.
export const UI_SCRIPT = String.raw`
'use strict';
(function () {
  var tokenMeta = document.querySelector('meta[name="runner-token"]');
  var token = tokenMeta ? tokenMeta.getAttribute('content') : null;

  function say(text) {
    var status = document.getElementById('action-status');
    if (status) status.textContent = text;
  }

  async function refresh() {
    var response = await fetch(location.pathname, { headers: { accept: 'text/html' }, cache: 'no-store' });
    if (!response.ok) return;
    var next = new DOMParser().parseFromString(await response.text(), 'text/html');
    var open = Array.prototype.map.call(document.querySelectorAll('details[open] > summary'), function (summary) { return summary.textContent; });
    ['main', '#live', '.actions'].forEach(function (selector) {
      var now = document.querySelector(selector);
      var fresh = next.querySelector(selector);
      if (now && fresh) now.replaceWith(fresh);
      else if (now && !fresh && selector === '.actions') now.remove();
    });
    document.querySelectorAll('details > summary').forEach(function (summary) {
      if (open.indexOf(summary.textContent) !== -1) summary.parentElement.open = true;
    });
    bindActions();
  }

  function follow() {
    var live = document.getElementById('live');
    if (!live || live.getAttribute('data-status') !== 'running' || !window.EventSource) return;
    var events = new EventSource('/runs/' + encodeURIComponent(live.getAttribute('data-run')) + '/events');
    var pending = false;
    var again = false;
    async function update() {
      if (pending) { again = true; return; }
      pending = true;
      try { await refresh(); } finally { pending = false; }
      if (again) { again = false; update(); }
    }
    events.addEventListener('changed', update);
    events.addEventListener('finished', function () { events.close(); update(); });
  }

  async function act(button) {
    var action = button.getAttribute('data-action');
    var run = '/runs/' + encodeURIComponent(button.getAttribute('data-run'));
    var answer = action === 'approve' || action === 'deny';
    var url = action === 'resume' ? run + '/resume' : answer ? run + '/steps/' + encodeURIComponent(button.getAttribute('data-step')) + '/' + action : '/workflows/' + encodeURIComponent(button.getAttribute('data-workflow')) + '/run';
    button.disabled = true;
    say(action === 'resume' ? 'resuming\u2026' : answer ? action + '\u2026' : 'starting ' + button.getAttribute('data-workflow') + '\u2026');
    try {
      var response = await fetch(url, { method: 'POST', headers: { 'x-runner-token': token || '' } });
      var body = await response.json().catch(function () { return {}; });
      if (!response.ok) { say('refused: ' + (body.error || response.status)); return; }
      say(body.message || 'started');
      if (body.run) location.assign('/runs/' + encodeURIComponent(body.run) + '/');
      else if (answer) location.reload();
    } catch (error) {
      say('failed: ' + error);
    } finally {
      button.disabled = false;
    }
  }

  function bindActions() {
    if (!token) return;
    document.querySelectorAll('button[data-action]').forEach(function (button) {
      if (button.dataset.bound) return;
      button.dataset.bound = '1';
      button.addEventListener('click', function () { act(button); });
    });
  }

  bindActions();
  follow();
})();
`;
