// inferd's dashboard: fetches /dashboard/state once a second and updates the
// page in place (no reload). Same origin only; no library. With --auth-keys
// the data routes answer 401/403 without a management key: the page then
// shows a key form and sends `Authorization: Bearer KEY` on every fetch.
'use strict';

(function () {
  const PAGE = 50;  // rows a page: the server pages, so 1,000 models cost one page
  const SVG = 'http://www.w3.org/2000/svg';
  const view = { offset: 0, sort: 'name', filter: '', selected: null };
  let timer = null;
  let inFlight = false;
  let updates = 0;
  const rows = new Map();  // model name -> {tr, cells}

  // The API key, when the server asks for one. In sessionStorage, not
  // localStorage: it dies with the tab (and survives only its reloads), so a
  // management key is not left on the disk of a shared or forgotten browser
  // for whoever opens the page next. It only ever goes into the
  // Authorization header of this origin's fetches: never into a URL, the
  // page or the console.
  const KEY_ITEM = 'inferd.dashboard.key';
  // RFC 6750's token68, as the server's key file allows (docs/SECURITY.md).
  const KEY_SYNTAX = /^[A-Za-z0-9._~+\/-]+=*$/;
  let apiKey = readKey();
  let needKey = false;

  function readKey() {
    try {
      return sessionStorage.getItem(KEY_ITEM) || '';
    } catch (e) {
      return '';  // storage disabled: the key lives in this page only
    }
  }
  function storeKey(key) {
    apiKey = key;
    try {
      if (key) sessionStorage.setItem(KEY_ITEM, key); else sessionStorage.removeItem(KEY_ITEM);
    } catch (e) { /* storage disabled: the key lives in this page only */ }
  }

  // A 401 or 403: the server's own message, and the key it refused ('' none).
  class Refused extends Error {
    constructor(status, message, key) {
      super(message);
      this.status = status;
      this.key = key;
    }
  }

  // GET of a data route of this origin with the key, if there is one; the
  // JSON, or a Refused / Error.
  function api(url) {
    const key = apiKey;
    const headers = key ? { Authorization: 'Bearer ' + key } : {};
    return fetch(url, { cache: 'no-store', headers }).then((r) => {
      if (r.status === 401 || r.status === 403) {
        return r.json().catch(() => ({})).then((body) => {
          throw new Refused(r.status, body.error || 'HTTP ' + r.status, key);
        });
      }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    });
  }

  const $ = (id) => document.getElementById(id);
  const field = (name) => document.querySelector('[data-field="' + name + '"]');

  function setText(el, text) {
    if (el && el.textContent !== text) el.textContent = text;
  }

  function bytes(n) {
    if (n === null || n === undefined) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = n, u = 0;
    while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return (u === 0 ? v.toFixed(0) : v.toFixed(v < 10 ? 1 : 0)) + ' ' + units[u];
  }
  function num(v, digits) {
    if (v === null || v === undefined || Number.isNaN(v)) return '–';
    return v.toFixed(digits);
  }
  function count(v) {
    if (v === null || v === undefined) return '–';
    return Math.round(v).toLocaleString('en-US');
  }
  function ago(s) {
    if (s === null || s === undefined) return 'never';
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    if (s < 86400) return Math.floor(s / 3600) + ' h ago';
    return Math.floor(s / 86400) + ' d ago';
  }

  // An inline SVG line of `values` (null = gap) scaled to their max; `second`
  // draws another series on the same scale. Bars for per-tick counts.
  function sparkline(values, opts) {
    opts = opts || {};
    const svg = document.createElementNS(SVG, 'svg');
    const cap = opts.capacity || values.length || 1;
    const w = 300, h = 40;
    svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    svg.setAttribute('preserveAspectRatio', 'none');
    const all = values.concat(opts.second || []).filter((v) => v !== null);
    const max = Math.max(opts.max || 0, ...all, 1e-9);
    const x = (i, len) => w - (len - 1 - i) * (w / Math.max(cap - 1, 1));
    const y = (v) => h - 1 - (v / max) * (h - 2);
    if (opts.bars) {
      values.forEach((v, i) => {
        if (!v) return;
        const r = document.createElementNS(SVG, 'rect');
        r.setAttribute('x', String(x(i, values.length) - 2));
        r.setAttribute('width', '3');
        r.setAttribute('y', String(y(v)));
        r.setAttribute('height', String(h - y(v)));
        if (opts.barClass) r.setAttribute('class', opts.barClass);
        svg.appendChild(r);
      });
      return svg;
    }
    const line = (series, cls) => {
      let d = '', pen = false;
      series.forEach((v, i) => {
        if (v === null) { pen = false; return; }
        d += (pen ? 'L' : 'M') + x(i, series.length).toFixed(1) + ' ' + y(v).toFixed(1);
        pen = true;
      });
      const p = document.createElementNS(SVG, 'path');
      p.setAttribute('d', d || 'M0 ' + (h - 1));
      if (cls) p.setAttribute('class', cls);
      svg.appendChild(p);
    };
    line(values);
    if (opts.second) line(opts.second, 'second');
    return svg;
  }
  function plot(container, svg) {
    if (!container) return;
    container.replaceChildren(svg);
  }

  function renderNode(state) {
    const n = state.node;
    setText(field('cpu_budget'), n.usable_cores + (n.usable_cores === 1 ? ' core' : ' cores') +
      ' · cpus ' + n.usable_cpus);
    const origin = $('cpu-origin');
    if (!origin.dataset.done) {
      n.origin.forEach((o) => {
        const tr = origin.insertRow();
        tr.insertCell().textContent = o.step;
        tr.insertCell().textContent = o.value;
      });
      const notes = $('cpu-notes');
      n.notes.forEach((t) => {
        const li = document.createElement('li');
        li.textContent = t;
        notes.appendChild(li);
      });
      origin.dataset.done = '1';
    }
    setText(field('cpu_cores'), n.cpu_cores === null ? '–'
      : num(n.cpu_cores, 2) + ' of ' + n.usable_cores + ' cores');
    plot($('spark-cpu'), sparkline(n.series.cpu_cores, { capacity: state.capacity, max: 1 }));

    setText(field('group_size'), n.executors.length + ' × ' + n.group_size +
      (n.group_size === 1 ? ' core' : ' cores'));
    const ex = $('executors');
    if (ex.children.length !== n.executors.length) {
      ex.replaceChildren();
      n.executors.forEach((e) => {
        const div = document.createElement('div');
        div.className = 'exec';
        div.dataset.executor = String(e.id);
        div.innerHTML = '<span class="name"></span><div class="bar"><div class="fill"></div></div>' +
          '<span class="pct"></span><span class="spark"></span>';
        div.querySelector('.name').textContent = 'exec ' + e.id;
        const small = document.createElement('small');
        small.textContent = 'cpu ' + e.cpus.join(',');
        div.querySelector('.name').appendChild(small);
        ex.appendChild(div);
      });
    }
    n.executors.forEach((e, i) => {
      const div = ex.children[i];
      const pct = Math.round((e.busy || 0) * 100);
      div.querySelector('.fill').style.width = pct + '%';
      setText(div.querySelector('.pct'), pct + '%');
      plot(div.querySelector('.spark'), sparkline(e.busy_series, { capacity: state.capacity, max: 1 }));
    });

    const budget = n.memory_budget_bytes;
    setText(field('memory'), bytes(n.model_bytes) + ' in models' +
      (budget > 0 ? ' of ' + bytes(budget) + ' budget' : ' · no budget'));
    const share = budget > 0 ? Math.min(1, n.model_bytes / budget) : 0;
    const fill = $('memory-fill');
    fill.style.width = (share * 100).toFixed(1) + '%';
    fill.classList.toggle('high', share > 0.9);
    setText(field('rss_bytes'), bytes(n.rss_bytes));
    plot($('spark-memory'), sparkline(n.series.model_bytes, {
      capacity: state.capacity, second: n.series.rss_bytes, max: budget || 0 }));

    setText(field('node_rps'), num(n.rps, 1) + ' req/s');
    plot($('spark-rps'), sparkline(n.series.rps, { capacity: state.capacity }));
    setText(field('node_requests'), count(n.requests));
    setText(field('cache'), count(n.cache_hits) + ' / ' + count(n.cache_misses));
    setText(field('loads'), count(n.loads) + ' / ' + count(n.load_failures) + ' / ' + count(n.evictions));
    const ev = sparkline(n.series.evictions, { capacity: state.capacity, bars: true, max: 1 });
    sparkline(n.series.loads, { capacity: state.capacity, bars: true, max: 1, barClass: 'loads' })
      .childNodes.forEach((c) => ev.appendChild(c.cloneNode()));
    plot($('spark-loads'), ev);
  }

  function renderSummary(state) {
    const s = $('summary');
    s.replaceChildren();
    const chip = (text) => {
      const span = document.createElement('span');
      span.className = 'chip';
      span.textContent = text;
      s.appendChild(span);
    };
    chip(state.models_total + ' models');
    Object.keys(state.states).forEach((k) => chip(state.states[k] + ' ' + k.toLowerCase()));
    setText($('server-version'), state.server.version);
  }

  const COLUMNS = ['name', 'state', 'version', 'resident_bytes', 'last_used', 'requests', 'rps',
    'rps_series', 'p50_ms', 'p99_ms', 'p99_series', 'queue_depth', 'batches', 'precision', 'extra'];
  const NUMERIC = new Set(['resident_bytes', 'last_used', 'requests', 'rps', 'p50_ms', 'p99_ms',
    'queue_depth']);

  function makeRow(name) {
    const tr = document.createElement('tr');
    tr.dataset.model = name;
    const cells = {};
    COLUMNS.forEach((c) => {
      const td = tr.insertCell();
      td.dataset.field = c;
      if (NUMERIC.has(c)) td.className = 'num';
      if (c.endsWith('_series')) {
        td.className = 'sparkcell';
        const span = document.createElement('span');
        span.className = 'spark';
        td.appendChild(span);
      }
      cells[c] = td;
    });
    cells.name.textContent = name;
    const badge = document.createElement('span');
    badge.className = 'state';
    const reason = document.createElement('span');
    reason.className = 'reason';
    reason.dataset.field = 'reason';
    cells.state.append(badge, reason);
    tr.addEventListener('click', () => showDetails(name));
    return { tr, cells, badge, reason };
  }

  function batchText(m) {
    if (!m.batches) return '–';
    const sizes = Object.keys(m.batch_sizes).map((k) => '≤' + k + ':' + m.batch_sizes[k]).join(' ');
    return 'mean ' + num(m.batch_mean, 1) + ' (' + sizes + ')';
  }

  function renderModels(state) {
    const body = $('model-rows');
    const seen = new Set();
    state.models.forEach((m, i) => {
      let r = rows.get(m.name);
      if (!r) { r = makeRow(m.name); rows.set(m.name, r); }
      seen.add(m.name);
      if (body.children[i] !== r.tr) body.insertBefore(r.tr, body.children[i] || null);
      const c = r.cells;
      setText(r.badge, m.state);
      r.badge.className = 'state ' + m.state;
      c.state.dataset.value = m.state;
      setText(r.reason, m.reason);
      r.reason.title = m.reason;
      setText(c.version, m.version === null ? '–' : String(m.version));
      setText(c.resident_bytes, m.resident_bytes ? bytes(m.resident_bytes) : '–');
      c.resident_bytes.dataset.value = String(m.resident_bytes);
      setText(c.last_used, ago(m.last_used_s_ago));
      setText(c.requests, count(m.requests));
      c.requests.dataset.value = String(m.requests);
      setText(c.rps, num(m.rps, 1));
      setText(c.p50_ms, num(m.p50_ms, 2));
      setText(c.p99_ms, num(m.p99_ms, 2));
      c.p99_ms.dataset.value = m.p99_ms === null ? '' : String(m.p99_ms);
      setText(c.queue_depth, count(m.queue_depth));
      setText(c.batches, batchText(m));
      setText(c.precision, m.precision || '–');
      const extra = Object.keys(m.extra).map((k) => k + ': ' + JSON.stringify(m.extra[k])).join(' · ');
      setText(c.extra, extra);
      c.extra.className = 'extra';
      if (m.series) {
        plot(c.rps_series.firstChild, sparkline(m.series.rps, { capacity: state.capacity }));
        plot(c.p99_series.firstChild, sparkline(m.series.p99_ms, { capacity: state.capacity }));
      }
      r.tr.classList.toggle('selected', view.selected === m.name);
    });
    rows.forEach((r, name) => {
      if (!seen.has(name)) { r.tr.remove(); rows.delete(name); }
    });
    const first = state.models.length ? state.offset + 1 : 0;
    const last = state.offset + state.models.length;
    setText($('page-info'), first + '–' + last + ' of ' + state.models_matched);
    $('prev').disabled = state.offset === 0;
    $('next').disabled = last >= state.models_matched;
    setText(field('models_count'), state.models_matched === state.models_total
      ? '' : state.models_matched + ' of ' + state.models_total + ' match');
  }

  function flatten(prefix, value, out) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      Object.keys(value).forEach((k) => flatten(prefix ? prefix + '.' + k : k, value[k], out));
    } else {
      out.push([prefix, typeof value === 'string' ? value : JSON.stringify(value)]);
    }
  }

  // Everything GET /models/{name} tells (precision, calibration, footprint and
  // any field added later), flattened into key/value rows.
  function showDetails(name) {
    view.selected = name;
    api('/models/' + encodeURIComponent(name))
      .then((body) => {
        const table = $('details-table');
        table.replaceChildren();
        const pairs = [];
        (Array.isArray(body) ? body : [body]).forEach((v, i) =>
          flatten(Array.isArray(body) && body.length > 1 ? String(i) : '', v, pairs));
        pairs.forEach(([k, v]) => {
          const tr = table.insertRow();
          tr.insertCell().textContent = k;
          tr.insertCell().textContent = v;
        });
        setText($('details-title'), name);
        $('details').hidden = false;
      })
      .catch((e) => {
        if (e instanceof Refused) return askForKey(e);
        setText($('status'), 'details of ' + name + ': ' + e.message);
      });
  }

  function stateUrl() {
    const q = new URLSearchParams({ offset: String(view.offset), limit: String(PAGE), sort: view.sort });
    if (view.filter) q.set('filter', view.filter);
    return '/dashboard/state?' + q.toString();
  }

  function refresh() {
    if (inFlight) return;
    inFlight = true;
    api(stateUrl())
      .then((state) => {
        renderSummary(state);
        renderNode(state);
        renderModels(state);
        updates++;
        document.body.dataset.updates = String(updates);
        if (!document.body.dataset.ready) {
          // Milliseconds from navigation to the first full render (tests read it).
          document.body.dataset.readyMs = String(Math.round(performance.now()));
          document.body.dataset.ready = '1';
        }
        const status = $('status');
        status.classList.remove('down');
        setText(status, 'updated ' + new Date().toLocaleTimeString() + ' · every ' + state.period_s + ' s');
      })
      .catch((e) => {
        if (e instanceof Refused) return askForKey(e);
        const status = $('status');
        status.classList.add('down');
        setText(status, 'server unreachable (' + e.message + '); retrying');
      })
      .finally(() => { inFlight = false; });
  }

  function stopPolling() {
    if (timer) clearInterval(timer);
    timer = null;
  }

  // The server refused the data: no key, an unknown one, or one of another
  // kind. Polling stops until a key is given; a refused key is forgotten, and
  // the server's message (which never quotes the key) says why.
  function askForKey(refusal) {
    if (refusal.key !== apiKey) return;  // an answer to a key already replaced
    stopPolling();
    needKey = true;
    if (refusal.key) storeKey('');
    const status = $('status');
    status.classList.add('down');
    setText(status, 'needs an API key');
    $('forget-key').hidden = true;
    const error = $('key-error');
    error.hidden = !refusal.key;
    setText(error, refusal.key
      ? 'The server refused this key (HTTP ' + refusal.status + '): ' + refusal.message : '');
    $('key-panel').hidden = false;
    $('key-input').focus();
  }

  function useKey(event) {
    event.preventDefault();  // nothing is submitted anywhere: the key stays out of every URL
    const input = $('key-input');
    let key = input.value.trim();
    if (/^bearer\s/i.test(key)) key = key.slice(7).trim();
    input.value = '';
    const error = $('key-error');
    if (!KEY_SYNTAX.test(key)) {
      error.hidden = false;
      setText(error, key ? 'This is not an API key: a key is letters, digits and - . _ ~ + / ' +
        '(then optional =), with no space.' : 'Paste a key first.');
      return;
    }
    storeKey(key);
    needKey = false;
    $('key-panel').hidden = true;
    $('forget-key').hidden = false;
    setText($('status'), 'checking the key…');
    restart();
  }

  // Forgets the key, and reloads so that no figure read with it stays shown.
  function forgetKey() {
    storeKey('');
    location.reload();
  }

  function restart() {
    if (needKey) return;
    refresh();
    if (timer) clearInterval(timer);
    timer = setInterval(refresh, 1000);
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('filter').addEventListener('input', (e) => {
      view.filter = e.target.value.trim();
      view.offset = 0;
      restart();
    });
    $('sort').addEventListener('change', (e) => {
      view.sort = e.target.value;
      view.offset = 0;
      restart();
    });
    $('prev').addEventListener('click', () => {
      view.offset = Math.max(0, view.offset - PAGE);
      restart();
    });
    $('next').addEventListener('click', () => {
      view.offset += PAGE;
      restart();
    });
    // A hidden tab stops polling: an open but unseen dashboard costs nothing.
    document.addEventListener('visibilitychange', () => {
      if (document.hidden) stopPolling(); else restart();
    });
    $('key-form').addEventListener('submit', useKey);
    $('forget-key').addEventListener('click', forgetKey);
    $('forget-key').hidden = !apiKey;
    restart();
  });
})();
