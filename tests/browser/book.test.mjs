// Opens every page of the rendered book in headless Debian Chromium and checks
// what a reader sees. Run by `cargo xtask browser-test` (after `cargo xtask book`):
//
//     node tests/browser/book.test.mjs [--book DIR] [--src DIR] [--screenshots DIR]
//
// Defaults: book/, src/ and target/screenshots/ of the repository this file is in.
// Exits 1 on any failure, naming the page and the reason.
//
// Checks, on every page of book/ but 404.html:
//   - no console error and no uncaught page error; no local request that fails;
//   - no request leaves the local server: mdBook's playground asks
//     https://play.rust-lang.org/meta/crates for its crate list, which is answered
//     here with a fixed list; any other outside request is aborted and fails;
//   - the sidebar lists every chapter of src/SUMMARY.md;
//   - no play button on a code block that uses the workspace's crates
//     (`faithful_workqueue`); a visible one on a runnable std/tokio/anyhow block;
// on each chapter (and print.html), every listing caption is visible and says
// "Listing N-M:" and links archives present in book/downloads/ (and a listing
// with a twin carries its "≡ Go" sign), every Rust block and its Go twin are
// two tabs that switch together, keep the choice over a reload and on the next
// page (Rust first on a fresh profile; both show without JavaScript and in
// print), every long output
// folded whole under its excerpt (`details.output`) starts closed and shows
// its code once its summary is clicked; then every `{{#include ../listings/...}}`
// (outputs, and the Go lines, left on the Go tab) is rendered verbatim, visible, with its
// first and last non-empty line in main's text, and every included SVG (the
// retry curve, the two diagrams) is a visible inline picture with its labels;
// and the search finds "Forget"; the performance appendix (written by
// `cargo xtask perf --write`) shows its run's date and machine and the Go
// comparison with its seven columns and a row per workload. A synthetic canary page (served only here, never
// written to book/) proves the crate-list answer and the play-button check work,
// since the book itself has no runnable block. Screenshots go to target/screenshots/.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const started = Date.now();
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? path.resolve(process.argv[i + 1]) : fallback;
}
const BOOK = option('book', path.join(repo, 'book'));
const SRC = option('src', path.join(repo, 'src'));
const SHOTS = option('screenshots', path.join(repo, 'target', 'screenshots'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SCREENSHOT_PAGES = ['ch03-retry-curve.html', 'ch05-silent-stall.html', 'performance.html'];

// The flags without which Chromium reaches for the network on this machine.
// playwright-core's launch() adds a fresh, empty --user-data-dir of its own
// (and removes it on close); passing one in args is refused by Playwright.
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// The one outside request the book may make, and the answer to it. book.js reads
// `response.crates.map(item => item['id'])`; the shape is the playground's own.
const CRATES_URL = 'https://play.rust-lang.org/meta/crates';
const CRATES = { crates: [
  { name: 'anyhow', version: '1.0.98', id: 'anyhow' },
  { name: 'tokio', version: '1.45.1', id: 'tokio' },
  { name: 'serde', version: '1.0.219', id: 'serde' },
] };
const PLAYGROUND_CRATES = new Set(CRATES.crates.map(c => c.id));
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-allow-headers': 'content-type',
};

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.ico': 'image/x-icon',
  '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject', '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json', '.xml': 'application/xml', '.wasm': 'application/wasm',
};

const failures = []; // { page, reason }
const notes = [];    // { page, note }: worth a look, never a failure
let checks = 0;
function check(page, ok, reason) {
  checks += 1;
  if (!ok) failures.push({ page, reason });
  return ok;
}

// ---------------------------------------------------------------- the book's sources

/** Every `[Title](file.md)` of SUMMARY.md, in order, as { title, html }. */
function summaryChapters() {
  const text = fs.readFileSync(path.join(SRC, 'SUMMARY.md'), 'utf8');
  const chapters = [];
  for (const m of text.matchAll(/\[([^\]]+)\]\(([^)\s]+\.md)\)/g)) {
    chapters.push({ title: m[1].trim(), md: m[2], html: m[2].replace(/\.md$/, '.html') });
  }
  return chapters;
}

/** The text an mdBook `{{#include path[:anchor | :a:b]}}` inserts. */
function includedText(mdFile, spec) {
  const [file, ...sel] = spec.split(':');
  const lines = fs.readFileSync(path.resolve(path.dirname(mdFile), file), 'utf8').split('\n');
  if (sel.length === 0) return lines.join('\n');
  if (sel.length === 1 && !/^\d*$/.test(sel[0])) {
    const name = sel[0];
    const start = lines.findIndex(l => new RegExp(`ANCHOR:\\s*${name}\\b`).test(l));
    const end = lines.findIndex((l, i) => i > start && new RegExp(`ANCHOR_END:\\s*${name}\\b`).test(l));
    if (start < 0 || end < 0) throw new Error(`${spec}: anchor ${name} not found`);
    return lines.slice(start + 1, end).filter(l => !/ANCHOR(_END)?:/.test(l)).join('\n');
  }
  const from = sel[0] ? Number(sel[0]) - 1 : 0;
  const to = sel.length > 1 && sel[1] ? Number(sel[1]) : (sel.length > 1 ? lines.length : from + 1);
  return lines.slice(from, to).join('\n');
}

/** The listing outputs a chapter includes verbatim: `{{#include ../listings/...}}`
 * (not `rustdoc_include`, which is Rust source), as { spec, lines }. */
/** `lines` without the leading whitespace all their non-blank lines share. */
function dedented(lines) {
  const shared = lines.filter(l => l.trim()).map(l => l.slice(0, l.length - l.trimStart().length))
    .reduce((a, b) => { if (a === null) return b; let i = 0; while (i < a.length && a[i] === b[i]) i++; return a.slice(0, i); }, null) ?? '';
  return lines.map(l => l.startsWith(shared) ? l.slice(shared.length) : l);
}

function chapterOutputs(md) {
  const mdFile = path.join(SRC, md);
  const text = fs.readFileSync(mdFile, 'utf8');
  const outputs = [];
  for (const m of text.matchAll(/\{\{#include\s+(\.\.\/listings\/[^\s}]+)\s*\}\}/g)) {
    let lines = includedText(mdFile, m[1]).split('\n').map(l => l.trimEnd());
    // Go shows on the page dedented (xtask's dedent-preprocessor strips the
    // indentation its lines share, so that a fragment from inside a func
    // starts at column 0), and so it is expected here.
    if (/\.go$/.test(m[1].split(':')[0])) lines = dedented(lines);
    while (lines.length && lines[lines.length - 1] === '') lines.pop();
    while (lines.length && lines[0] === '') lines.shift();
    outputs.push({ spec: m[1], lines, svg: /\.svg$/.test(m[1].split(':')[0]) });
  }
  return outputs;
}

function htmlPages(dir, base = dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return htmlPages(full, base);
    return entry.name.endsWith('.html') ? [path.relative(base, full).split(path.sep).join('/')] : [];
  }).filter(p => p !== '404.html').sort();
}

// ---------------------------------------------------------------- the local server

const CANARY = '__playground-canary.html';

/** A copy of a real chapter whose main holds two runnable Rust blocks: one the
 * playground can run (std, tokio, anyhow) and one it cannot (the workspace crate). */
function canaryPage() {
  const html = fs.readFileSync(path.join(BOOK, 'introduction.html'), 'utf8');
  const main = /<main>[\s\S]*<\/main>/;
  if (!main.test(html)) throw new Error('introduction.html has no <main>');
  return html.replace(main, `<main>
<h1>Playground canary</h1>
<pre class="playground" id="canary-runnable"><code class="language-rust edition2024">extern crate anyhow;
extern crate tokio;
fn main() -> anyhow::Result&lt;()&gt; { println!("{:?}", std::time::Duration::from_millis(5)); Ok(()) }
</code></pre>
<pre class="playground" id="canary-workspace"><code class="language-rust edition2024">extern crate faithful_workqueue;
fn main() {}
</code></pre>
</main>`);
}

function serve() {
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400).end('bad url');
      return;
    }
    if (rel === `/${CANARY}`) {
      res.writeHead(200, { 'content-type': MIME['.html'] }).end(canaryPage());
      return;
    }
    let file = path.normalize(path.join(BOOK, rel));
    if (file !== BOOK && !file.startsWith(BOOK + path.sep)) {
      res.writeHead(403).end('outside the book');
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, body) => {
      if (err) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const type = MIME[path.extname(file).toLowerCase()] || 'application/octet-stream';
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    });
  });
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// ---------------------------------------------------------------- one page

/** Opens `name`, records console errors, page errors, failed local requests and
 * outside requests (the crate list is answered, anything else aborted). */
async function open(context, origin, name) {
  const page = await context.newPage();
  const seen = { crates: 0 };
  page.on('console', msg => {
    if (msg.type() === 'error') {
      const loc = msg.location();
      const where = loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : '';
      failures.push({ page: name, reason: `console error: ${msg.text()}${where}` });
    }
  });
  page.on('pageerror', err => failures.push({ page: name, reason: `page error: ${err.message}` }));
  page.on('response', res => {
    if (res.url().startsWith(origin) && res.status() >= 400) {
      failures.push({ page: name, reason: `local request ${res.url()} answered ${res.status()}` });
    }
  });
  page.on('requestfailed', req => {
    if (req.url().startsWith(origin)) {
      failures.push({ page: name, reason: `local request ${req.url()} failed: ${req.failure()?.errorText}` });
    }
  });
  await page.route('**/*', async route => {
    const req = route.request();
    const url = req.url();
    if (url.startsWith(origin + '/')) return route.continue();
    if (url === CRATES_URL) {
      seen.crates += 1;
      if (req.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: CORS });
      return route.fulfill({ status: 200, headers: CORS, contentType: 'application/json', body: JSON.stringify(CRATES) });
    }
    failures.push({ page: name, reason: `request outside the local server: ${req.method()} ${url}` });
    return route.abort('blockedbyclient');
  });
  await page.goto(`${origin}/${name}`, { waitUntil: 'load' });
  // Lets book.js, toc.js and the crate-list answer settle.
  await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => {});
  return { page, seen };
}

/** The sidebar's chapter links (text, href), however mdBook put it there. */
async function sidebarLinks(page) {
  return page.evaluate(() => {
    const box = document.querySelector('mdbook-sidebar-scrollbox') || document.querySelector('ol.chapter')?.parentElement;
    if (!box) return null;
    return Array.from(box.querySelectorAll('a[href]')).map(a => {
      const r = a.getBoundingClientRect();
      return { text: a.textContent.replace(/\s+/g, ' ').trim(), href: a.getAttribute('href'), visible: r.width > 0 && r.height > 0 && a.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) };
    });
  });
}

function checkSidebar(name, links, chapters, mustBeVisible) {
  if (!check(name, links && links.length > 0, 'sidebar: no chapter links found')) return;
  for (const ch of chapters) {
    const link = links.find(l => l.href.split('#')[0].replace(/^(\.\.\/)+/, '').endsWith(ch.html) && l.text.endsWith(ch.title));
    if (check(name, link, `sidebar: chapter "${ch.title}" (${ch.html}) is not listed`) && mustBeVisible) {
      check(name, link.visible, `sidebar: chapter "${ch.title}" is listed but not visible`);
    }
  }
}

/** Each code block: its text (hidden lines included), whether it is a playground,
 * its classes, and whether a play button is visible. */
// mdBook shows a block's buttons only while the pointer is over it, so each
// block is hovered, as a reader would, before its play button is looked at.
async function codeBlocks(page) {
  const pres = page.locator('main pre:has(code)');
  const blocks = [];
  for (let i = 0; i < await pres.count(); i++) {
    const pre = pres.nth(i);
    if (await pre.locator('.play-button').count()) {
      await pre.hover({ timeout: 2000 }).catch(() => {});
      // The buttons fade in over 0.1s: wait for the fade, not for a fixed time
      // (a button that never shows is reported by the caller).
      await pre.evaluate(pre => new Promise(resolve => {
        const button = pre.querySelector('.play-button');
        const start = performance.now();
        (function poll() {
          const shown = button.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
          if (shown || performance.now() - start > 1000) resolve();
          else requestAnimationFrame(poll);
        })();
      }));
    }
    blocks.push(await pre.evaluate((pre, i) => {
      const button = pre.querySelector('.play-button');
      const visible = !!button && !button.hidden && !button.classList.contains('hidden') && button.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
      const code = pre.querySelector('code');
      return { index: i, id: pre.id, text: code.textContent, classes: code.className, playground: pre.classList.contains('playground'), button: !!button, visible };
    }, i));
  }
  return blocks;
}

function externCrates(text) {
  return Array.from(text.matchAll(/extern\s+crate\s+([A-Za-z_0-9]+)\s*;/g), m => m[1]);
}

/** Does this block use only what the playground has (std and the crate list)? */
function playgroundOnly(block) {
  if (/faithful_workqueue/.test(block.text)) return false;
  const paths = Array.from(block.text.matchAll(/\b([a-z_][a-z0-9_]*)::/g), m => m[1])
    .filter(p => !['std', 'core', 'alloc', 'crate', 'self', 'super', 'Self'].includes(p));
  const roots = new Set([...externCrates(block.text), ...paths.filter(p => PLAYGROUND_CRATES.has(p))]);
  return [...roots].every(c => PLAYGROUND_CRATES.has(c));
}

async function checkPlayButtons(name, page, seen) {
  const blocks = await codeBlocks(page);
  if (blocks.some(b => b.playground)) {
    // book.js shows the play buttons only once the crate list has come back.
    await page.waitForFunction(() => Array.from(document.querySelectorAll('pre.playground')).every(pre => pre.querySelector('.play-button')), null, { timeout: 5000 }).catch(() => {});
    check(name, seen.crates > 0, `runnable blocks but no request for the crate list (${CRATES_URL})`);
  }
  for (const block of await codeBlocks(page)) {
    const what = `code block ${block.index + 1}${block.id ? ` #${block.id}` : ''} (${block.classes || 'no class'})`;
    if (/faithful_workqueue/.test(block.text)) {
      check(name, !block.visible, `${what} uses faithful_workqueue but shows a play button (mark it noplayground)`);
    } else if (block.playground && !/\bno_run\b/.test(block.classes) && playgroundOnly(block)) {
      check(name, block.visible, `${what} uses only std/${[...PLAYGROUND_CRATES].join('/')} but shows no play button`);
    }
    // Not a failure: rustdoc's `# ` hidden lines shown to the reader, which happens
    // when a block's first word is not `rust` (e.g. ```compile_fail), so mdBook
    // does not treat it as Rust and does not hide them.
    const shown = block.text.split('\n').filter(l => /^#\s/.test(l) && /extern crate|^#\s*(\/\/|use |fn |})/.test(l));
    if (shown.length && !/language-rust/.test(block.classes)) {
      notes.push({ page: name, note: `${what} shows ${shown.length} rustdoc hidden line(s) to the reader, e.g. "${shown[0]}"` });
    }
  }
  return blocks;
}

/** The Rust/Go pairs of a page as its sources have them, in page order: each
 * `<div class="twin" data-lang="…">` and the listing its include names, so that
 * a failure says "listing 5-1 (twin/main.go:healthy)" rather than "pair #3".
 * print.html holds every chapter, in SUMMARY.md's order. */
function twinsOf(name) {
  const chapters = summaryChapters();
  const mds = name === 'print.html' ? chapters.map(ch => ch.md) : chapters.filter(ch => ch.html === name).map(ch => ch.md);
  const twins = [];
  for (const md of mds) {
    const lines = fs.readFileSync(path.join(SRC, md), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = line.match(/^<div class="twin" data-lang="(\w+)">/);
      if (!m) return;
      const inc = lines.slice(i + 1).map(l => l.match(/\{\{#(?:rustdoc_)?include \.\.\/listings\/[^/]+\/listing-(\d\d)-(\d\d)\/([^\s}]+)\s*\}\}/)).find(Boolean);
      const listing = inc ? `listing ${Number(inc[1])}-${Number(inc[2])} (${inc[3]})` : `the twin on line ${i + 1}`;
      twins.push({ lang: m[1], what: `${md}: ${listing}` });
    });
  }
  return twins;
}

/** What each Rust/Go pair on the page shows: its tabs and which panel is
 * visible, in page order (one entry per `div.twin`). */
async function tabStates(page) {
  return page.evaluate(() => {
    const seen = el => {
      if (!el) return false;
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    };
    return Array.from(document.querySelectorAll('main div.twin')).map(twin => {
      const group = twin.closest('.lang-tabs');
      if (!group) return { grouped: false, twinShown: seen(twin.querySelector('pre code')), blockShown: seen(twin.previousElementSibling) };
      const tabs = Array.from(group.querySelectorAll(':scope > [role="tablist"] > [role="tab"]'));
      const panels = {};
      for (const lang of ['rust', 'go']) {
        const panel = group.querySelector(`:scope > [role="tabpanel"][data-panel="${lang}"]`);
        const code = panel && panel.querySelector('pre code');
        panels[lang] = panel && {
          id: panel.id,
          labelledBy: panel.getAttribute('aria-labelledby'),
          shown: seen(code),
          lines: code ? code.textContent.trim().split('\n').length : 0,
          language: code && code.classList.contains(`language-${lang}`),
        };
      }
      return {
        grouped: true,
        tabs: tabs.map(t => ({ id: t.id, text: t.textContent.trim(), lang: t.dataset.lang, selected: t.getAttribute('aria-selected'), tabIndex: t.tabIndex, controls: t.getAttribute('aria-controls'), button: t.tagName === 'BUTTON' })),
        panels,
      };
    });
  });
}

/** Every pair is a "Rust" and a "Go" tab over one panel each, and shows
 * `lang`'s code and hides the other's; `when` says what the reader did. */
function checkTabs(name, states, twins, lang, when) {
  check(name, states.length === twins.length, `${states.length} Go/Rust twins on the page, its sources have ${twins.length}`);
  states.forEach((s, i) => {
    const what = `${twins[i]?.what ?? `pair #${i + 1}`}, ${when}`;
    if (!check(name, s.grouped, `${what}: the twin is not a pair of tabs (tabs.js found no ${twins[i]?.lang === 'go' ? 'Rust' : 'Go'} block right before it)`)) return;
    const texts = s.tabs.map(t => t.text).join(', ');
    if (!check(name, texts === 'Rust, Go' && s.tabs.every(t => t.button), `${what}: tabs "${texts}", want buttons "Rust, Go"`)) return;
    for (const tab of s.tabs) {
      const other = tab.lang === 'rust' ? 'go' : 'rust';
      const on = tab.lang === lang;
      check(name, tab.selected === String(on), `${what}: the ${tab.text} tab has aria-selected=${tab.selected}, want ${on}`);
      check(name, tab.tabIndex === (on ? 0 : -1), `${what}: the ${tab.text} tab has tabindex ${tab.tabIndex}, want ${on ? 0 : -1} (one tab stop per list)`);
      const panel = s.panels[tab.lang];
      if (!check(name, panel && panel.lines > 0 && panel.language, `${what}: no ${tab.text} code in the ${tab.text} panel`)) continue;
      check(name, tab.controls === panel.id && panel.labelledBy === tab.id, `${what}: the ${tab.text} tab and its panel do not name each other (aria-controls, aria-labelledby)`);
      check(name, panel.shown === on, on ? `${what}: the ${tab.text} code is not visible` : `${what}: the ${tab.text} code is visible beside the ${s.panels[other] ? (other === 'go' ? 'Go' : 'Rust') : ''} code`);
    }
  });
}

/** What the page's "Run it with" commands show (the `{{#run}}` directive's
 * spans, xtask/src/run_lines.rs), in page order. */
async function runLines(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll('main .run-line')).map(line => {
    const seen = el => el.getClientRects().length > 0 && el.checkVisibility({ checkVisibilityCSS: true });
    const paragraph = line.closest('p, li, td') || line;
    return {
      twinned: line.classList.contains('twinned'),
      oneSide: line.classList.contains('one-side'),
      commands: Array.from(line.querySelectorAll(':scope > .run'), r => ({ lang: r.dataset.lang, text: r.textContent, shown: seen(r) })),
      notes: Array.from(line.querySelectorAll(':scope > .run-note'), n => ({ lang: n.dataset.lang, shown: seen(n) })),
      or: Array.from(line.querySelectorAll(':scope > .run-or'), o => seen(o)),
      paragraph: paragraph.innerText.replace(/\s+/g, ' ').trim(),
    };
  }));
}

/** With `lang` chosen, every command that runs a listing with a Go twin is
 * shown in `lang` only, with no "or" and nothing of the other language in
 * its sentence; a listing in one language is run in it and says so to the
 * other language's reader; a line about one side's own output shows that
 * side's command whatever the choice. `printed` (no script, or paper): every
 * command shows, the two of a twin joined by "or, for the Go twin". */
function checkRunLines(name, lines, lang, when, printed = false) {
  const other = { rust: /\bcargo run\b/, go: /\bgo (-C \S+ )?(run|test)\b/ };
  lines.forEach((l, i) => {
    const what = `"Run it with" line #${i + 1} (${l.commands.map(c => c.text).join(' | ')}), ${when}`;
    if (printed) {
      check(name, l.commands.every(c => c.shown) && l.or.every(Boolean), `${what}: a command or its "or" is hidden`);
      return;
    }
    if (l.oneSide) {
      check(name, l.commands.length === 1 && l.commands[0].shown, `${what}: a side's own command is not shown`);
    } else if (l.twinned) {
      const shown = l.commands.filter(c => c.shown).map(c => c.lang);
      check(name, shown.length === 1 && shown[0] === lang, `${what}: shows ${shown.join(' and ') || 'nothing'}, want ${lang} only`);
      check(name, l.or.every(o => !o), `${what}: the "or, for the Go twin" shows beside one command`);
      const foreign = lang === 'go' ? other.rust : other.go;
      check(name, !foreign.test(l.paragraph), `${what}: its sentence names the other language's command: "${l.paragraph.slice(0, 160)}"`);
    } else {
      check(name, l.commands.length === 1 && l.commands[0].shown, `${what}: the one command is not shown`);
      const own = l.commands[0]?.lang;
      for (const n of l.notes) {
        check(name, n.shown === (n.lang === lang && own !== lang), `${what}: its "${own === 'rust' ? 'Rust' : 'Go'} only" note is ${n.shown ? 'shown' : 'hidden'} to a ${lang} reader`);
      }
    }
  });
}

/** The reader's language, as the page stored it. */
const questionShown = page => page.evaluate(() => {
  const q = document.querySelector('main .language-question');
  return !!q && q.checkVisibility({ checkVisibilityCSS: true });
});
const storedLanguage = page => page.evaluate(() => window.localStorage.getItem('forget-is-not-delete.language'));

/** Picks `lang` on the page's `index`th pair (by clicking its tab) and
 * returns the page's pairs afterwards. A check that must see every Rust (or
 * Go) block, such as a width check, can call this first. */
async function chooseLanguage(page, lang, index = 0) {
  const tab = page.locator('main .lang-tabs').nth(index).locator(`[role="tab"][data-lang="${lang}"]`);
  await tab.click();
  return tabStates(page);
}

// The language every page of the main run opens with: Rust on the fresh
// profile, then whatever the page before left (Go), which is the check that
// the choice follows the reader to another page.
let tabsExpected = 'rust';
let tabsReloaded = false;

/** Captions under listings are visible and numbered, and link their files'
 * archives; a listing with a Go twin carries the twin's sign. Each Rust block
 * with a Go twin is a pair of tabs: the page opens on the language chosen
 * before (Rust on a fresh profile), a click on the other tab switches every
 * pair of the page, and the choice is stored, kept over a reload (checked on
 * the first page with pairs) and on the next page. The page is left on Go,
 * so that the output checks below see the Go lines it includes. Each long
 * output, folded whole under its excerpt, is closed at first and shows a
 * non-empty code block once its summary is clicked (and stays open). */
async function checkCaptionsAndTwins(name, page) {
  const captions = await page.evaluate(() => Array.from(document.querySelectorAll('main .caption')).map(el => {
    el.scrollIntoView({ block: 'center' });
    const r = el.getBoundingClientRect();
    const sign = el.querySelector('.twin-sign');
    return {
      text: el.innerText.trim(),
      visible: r.width > 0 && r.height > 0 && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }),
      links: !!el.querySelector(':scope > .caption-links'),
      archives: Array.from(el.querySelectorAll('a'), a => a.getAttribute('href')),
      sign: sign && { text: sign.textContent.trim(), title: sign.getAttribute('title') || '', visible: sign.checkVisibility({ checkVisibilityCSS: true }) },
    };
  }));
  for (const c of captions) {
    const what = `caption "${c.text.slice(0, 60)}"`;
    check(name, /^Listing \d+-\d+: /.test(c.text), `${what} does not start with "Listing N-M: "`);
    check(name, c.visible, `${what} is not visible`);
    check(name, c.links && / · /.test(c.text), `${what}: no " · " and small links after what the listing shows`);
    // A listing with a crate and a twin is marked by a sign that explains
    // itself on hover; the introduction makes the promise once, and an appendix explains it.
    const twinned = c.archives.some(h => /-go\.tar\.gz$/.test(h)) && c.archives.some(h => /\d\.tar\.gz$/.test(h));
    if (twinned) {
      check(name, c.sign && /^(≡ )?Go$/.test(c.sign.text) && c.sign.visible, `${what}: a listing with a Go twin, but no visible "≡ Go" or "Go" sign`);
      check(name, c.sign && /^The Go twin, twin\/\S+, .*checks it on every run\.$/.test(c.sign.title), `${what}: the twin's sign has no title saying what the twin prints ("${c.sign?.title ?? ''}")`);
      check(name, !c.sign || (c.sign.text === '≡ Go') === /prints the same bytes/.test(c.sign.title), `${what}: the sign "${c.sign?.text}" does not match its title ("${c.sign?.title}")`);
    } else {
      check(name, !c.sign, `${what}: a twin's sign on a listing with no crate and twin`);
    }
  }
  // A caption's download links name archives that `cargo xtask book` wrote.
  const downloads = captions.flatMap(c => c.archives);
  for (const href of downloads) {
    check(name, /^downloads\/[\w.-]+\.tar\.gz$/.test(href), `caption link "${href}" is not an archive under downloads/`);
    check(name, fs.existsSync(path.join(BOOK, href)), `caption link "${href}": no such file in the rendered book`);
  }

  // Rust or Go.
  const twins = twinsOf(name);
  let states = await tabStates(page);
  const runs = await runLines(page);
  const opened = tabsExpected === 'rust' ? 'on a fresh profile' : 'as the page before left it';
  checkRunLines(name, runs, tabsExpected, opened);
  if (states.length || twins.length) {
    checkTabs(name, states, twins, tabsExpected, opened);
    const other = tabsExpected === 'rust' ? 'go' : 'rust';
    if (states.length && states.every(s => s.grouped)) {
      // Clicked on the last pair: every pair switches, not just that one.
      states = await chooseLanguage(page, other, states.length - 1);
      checkTabs(name, states, twins, other, `after a click on the ${other} tab of the last pair`);
      checkRunLines(name, await runLines(page), other, `after a click on the ${other} tab of the last pair`);
      check(name, await storedLanguage(page) === other, `the choice of ${other} is not stored (localStorage)`);
      if (other !== 'go') {
        states = await chooseLanguage(page, 'go', 0);
        checkTabs(name, states, twins, 'go', 'after a click on the Go tab of the first pair');
        checkRunLines(name, await runLines(page), 'go', 'after a click on the Go tab of the first pair');
      }
      if (!tabsReloaded) {
        tabsReloaded = true;
        await page.reload({ waitUntil: 'load' });
        checkTabs(name, await tabStates(page), twins, 'go', 'after choosing Go and reloading the page');
      }
      tabsExpected = 'go';
    }
  }

  // Long outputs are folded.
  const count = await page.locator('main details.output').count();
  for (let i = 0; i < count; i++) {
    const details = page.locator('main details.output').nth(i);
    const closed = await details.evaluate(d => !d.open);
    check(name, closed, `folded output #${i + 1} is unfolded before anyone clicks it`);
    await details.locator('summary').click();
    const shown = await details.evaluate(d => {
      const code = d.querySelector('pre code');
      if (!d.open || !code) return false;
      const r = code.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && code.textContent.trim().length > 0;
    });
    check(name, shown, `folded output #${i + 1} shows no code after its summary is clicked`);
  }
  return { captions: captions.length, twins: states.length, runs: runs.length, outputs: count, downloads: downloads.length };
}

/** Rust or Go where the main run cannot look: a fresh profile opens on Rust
 * and stores nothing until the reader picks; the arrow keys move the choice
 * and the focus; without JavaScript, and when the page is printed (the PDF is
 * print.html, printed), both blocks of every pair show, one after the other,
 * with no tabs. Screenshots of one chapter at 1280 and 390 px in both
 * languages go to target/screenshots/. */
const TABS_PAGE = 'ch05-silent-stall.html';
async function checkTabsElsewhere(browser, origin) {
  const before = failures.length;
  const name = `${TABS_PAGE} (fresh profile)`;
  const twins = twinsOf(TABS_PAGE);
  const info = [];
  // The first pair near the top of the window, as a reader scrolls to it.
  const shoot = async (page, width, lang) => {
    await page.evaluate(() => {
      const top = document.querySelector('main .lang-tabs').getBoundingClientRect().top;
      window.scrollBy(0, top - 120);
    });
    const file = path.join(SHOTS, `tabs-${TABS_PAGE.replace(/\.html$/, '')}-${width}-${lang}.png`);
    await page.screenshot({ path: file });
    info.push(path.relative(repo, file));
  };

  const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const { page } = await open(fresh, origin, TABS_PAGE);
    checkTabs(name, await tabStates(page), twins, 'rust', 'on a fresh profile');
    check(name, await storedLanguage(page) === null, 'a choice is stored before the reader made one');
    check(name, await questionShown(page), 'a fresh profile is not asked which language it writes');
    await shoot(page, 1280, 'rust');
    // The keyboard: the selected tab is the list's one tab stop; the arrow
    // keys move to the other tab and choose it (and do not turn the page,
    // which mdBook does with them elsewhere).
    const first = page.locator('main .lang-tabs').first();
    await first.locator('[role="tab"][data-lang="rust"]').focus();
    await page.keyboard.press('ArrowRight');
    checkTabs(name, await tabStates(page), twins, 'go', 'after ArrowRight on the Rust tab');
    check(name, await page.evaluate(() => document.activeElement?.getAttribute('data-lang') === 'go' && document.activeElement.getAttribute('role') === 'tab'), 'ArrowRight on the Rust tab does not move the focus to the Go tab');
    check(name, await storedLanguage(page) === 'go', 'the choice of Go by keyboard is not stored');
    check(name, !(await questionShown(page)), 'the language question stays after the reader chose on a tab');
    await shoot(page, 1280, 'go');
    await page.keyboard.press('ArrowLeft');
    checkTabs(name, await tabStates(page), twins, 'rust', 'after ArrowLeft on the Go tab');
    // Printing shows both, whatever the choice (the tabs are screen-only).
    await chooseLanguage(page, 'go');
    await page.emulateMedia({ media: 'print' });
    const printed = await tabStates(page);
    printed.forEach((s, i) => {
      const what = twins[i]?.what ?? `pair #${i + 1}`;
      check(name, s.grouped && s.panels.rust?.shown && s.panels.go?.shown, `${what}, printed: the Rust and the Go code do not both show`);
    });
    check(name, await page.evaluate(() => Array.from(document.querySelectorAll('main [role="tablist"]')).every(l => !l.checkVisibility())), 'printed: the tabs show on paper');
    checkRunLines(name, await runLines(page), 'go', 'printed', true);
    // Nothing scrolls on paper: a box that could scroll has its scroll bar
    // painted down the page by Chromium's print, over the ends of lines.
    const scrollers = await page.evaluate(() => [document.documentElement, document.body, ...document.body.querySelectorAll('*')]
      .filter(el => el.checkVisibility() && el.getBoundingClientRect().width > 0)
      .map(el => ({ el, cs: getComputedStyle(el) }))
      .filter(({ cs }) => [cs.overflowX, cs.overflowY].some(o => o === 'auto' || o === 'scroll'))
      .map(({ el, cs }) => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.classList.length ? '.' + [...el.classList].join('.') : ''} (overflow ${cs.overflowX} ${cs.overflowY})`));
    check(name, scrollers.length === 0, `printed: ${scrollers.length} box(es) can scroll, and print a scroll bar over the text: ${scrollers.slice(0, 5).join(', ')}`);
    await page.close();
  } finally {
    await fresh.close();
  }

  // The first visit's question, answered: Go everywhere, on this page and
  // after a reload, and never asked again.
  const asked = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const answered = `${TABS_PAGE} (question answered Go)`;
    const { page } = await open(asked, origin, TABS_PAGE);
    check(answered, await questionShown(page), 'a fresh profile is not asked which language it writes');
    checkRunLines(answered, await runLines(page), 'rust', 'before the question is answered');
    await page.locator('main .language-question button[data-lang="go"]').click();
    check(answered, await storedLanguage(page) === 'go', 'the answer Go is not stored');
    check(answered, !(await questionShown(page)), 'the question stays after it was answered');
    checkTabs(answered, await tabStates(page), twins, 'go', 'after answering Go');
    checkRunLines(answered, await runLines(page), 'go', 'after answering Go');
    await page.reload({ waitUntil: 'load' });
    check(answered, !(await questionShown(page)), 'the question is asked again after a reload');
    checkTabs(answered, await tabStates(page), twins, 'go', 'after answering Go and reloading');
    checkRunLines(answered, await runLines(page), 'go', 'after answering Go and reloading');
    await page.close();
  } finally {
    await asked.close();
  }

  // A phone's width: the tabs are there and switch the same way.
  const narrow = await browser.newContext({ viewport: { width: 390, height: 844 } });
  try {
    const phone = `${TABS_PAGE} (390 px)`;
    const { page } = await open(narrow, origin, TABS_PAGE);
    checkTabs(phone, await tabStates(page), twins, 'rust', 'on a fresh profile');
    await shoot(page, 390, 'rust');
    checkTabs(phone, await chooseLanguage(page, 'go'), twins, 'go', 'after a click on the Go tab');
    await shoot(page, 390, 'go');
    await page.close();
  } finally {
    await narrow.close();
  }

  // Without JavaScript: no tabs, every twin visible right after its block.
  const plain = await browser.newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
  try {
    const noJs = `${TABS_PAGE} (no JavaScript)`;
    const { page } = await open(plain, origin, TABS_PAGE);
    const states = await tabStates(page);
    check(noJs, states.length === twins.length && twins.length > 0, `${states.length} twins on the page, its sources have ${twins.length}`);
    states.forEach((s, i) => {
      const what = twins[i]?.what ?? `pair #${i + 1}`;
      check(noJs, !s.grouped && s.twinShown && s.blockShown, `${what}: the block and its twin do not both show`);
    });
    const runs = await runLines(page);
    check(noJs, runs.some(l => l.twinned), 'no "Run it with" line of a listing with a twin on the page');
    checkRunLines(noJs, runs, null, 'without JavaScript', true);
    await page.close();
  } finally {
    await plain.close();
  }
  return { name: `${TABS_PAGE} (fresh profile, no JS, print)`, ok: failures.length === before, ms: 0, info: [`${twins.length} pairs`, `screenshots ${info.join(', ')}`] };
}

/** Every included output on the page: its first and last non-empty lines are in
 * main's innerText, the smallest element holding each is visible, and some code
 * block renders the whole file verbatim. */
async function checkOutputs(name, page, outputs) {
  // A fold a reader opens to read (chapter 9's Rust informer, in a
  // `details.source`) is read open, as the reader reads it.
  await page.evaluate(() => { for (const d of document.querySelectorAll('main details')) d.open = true; });
  const [mainText, mainSource] = await page.evaluate(() => [document.querySelector('main')?.innerText ?? null, document.querySelector('main')?.textContent ?? '']);
  if (!check(name, mainText !== null, 'no <main> element')) return;
  for (const out of outputs) {
    if (!check(name, out.lines.length > 0, `${out.spec}: the included file is empty`)) continue;
    if (out.svg) {
      await checkSvg(name, page, out);
      continue;
    }
    const ends = [...new Set([out.lines[0].trim(), out.lines[out.lines.length - 1].trim()])];
    for (const line of ends) {
      const why = mainSource.includes(line) ? 'is in the HTML but not rendered (hidden?)' : 'is not in the page';
      if (!check(name, mainText.includes(line), `${out.spec}: line "${line}" ${why}`)) continue;
      // The smallest elements holding the line; the same text may also sit in a
      // hidden line of a Rust block (a `println!`), so one visible holder suffices.
      const where = await page.evaluate(line => {
        const holds = el => (el.innerText ?? el.textContent ?? '').includes(line);
        const all = Array.from(document.querySelectorAll('main *')).filter(holds);
        const smallest = all.filter(el => !Array.from(el.children).some(holds));
        const visible = smallest.find(el => {
          el.scrollIntoView({ block: 'center' });
          const r = el.getBoundingClientRect();
          return r.width > 0 && r.height > 0 && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
        });
        return { tags: smallest.map(el => el.tagName.toLowerCase() + ((el.getAttribute('class') || '') ? `.${el.getAttribute('class').split(' ')[0]}` : '')), visible: !!visible };
      }, line);
      check(name, where.visible, `${out.spec}: line "${line}" is in the page but no element holding it is visible (${where.tags.join(', ') || 'none'})`);
    }
    // The analyzer's testdata shows each `// want` comment as the report it
    // stands for (`// ← …` or `// fact …`, xtask/src/dedent.rs): the code
    // before the comment must match, and a comment of some kind be there.
    const shown = l => l.replace(/\t/g, '    ').replace(/\s*\/\/ (want|←|fact) .*$/, ' //…').trimEnd();
    const verbatim = await page.evaluate(lines => Array.from(document.querySelectorAll('main pre code')).some(code => {
      const got = code.textContent.split('\n').map(l => l.replace(/\t/g, '    ').replace(/\s*\/\/ (want|←|fact) .*$/, ' //…').trimEnd());
      while (got.length && got[got.length - 1] === '') got.pop();
      while (got.length && got[0] === '') got.shift();
      return got.length === lines.length && got.every((l, i) => l === lines[i]);
      // mdBook has highlight.js show a tab as four spaces (Go is indented with tabs);
      // trailing blanks are invisible on both sides (a patch's empty context line is one space).
    }), out.lines.map(shown));
    check(name, verbatim, `${out.spec}: no code block holds the file verbatim (${out.lines.length} lines)`);
  }
}

/** The Rust blocks of a page's sources that have hidden lines, in page
 * order: for each, the file a `{{#rustdoc_include}}` shows whole behind the
 * eye icon (null for a block whose hidden lines are written in the chapter),
 * and how many hidden lines the chapter adds before it. */
function hiddenBlocksOf(name) {
  const chapters = summaryChapters();
  const mds = name === 'print.html' ? chapters.map(ch => ch.md) : chapters.filter(ch => ch.html === name).map(ch => ch.md);
  const blocks = [];
  for (const md of mds) {
    const mdFile = path.join(SRC, md);
    const lines = fs.readFileSync(mdFile, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const fence = lines[i].match(/^(`{3,})rust\b/);
      if (!fence) continue;
      let j = i + 1;
      while (j < lines.length && !lines[j].startsWith(fence[1])) j++;
      const body = lines.slice(i + 1, j);
      const own = body.filter(l => /^#( |$)/.test(l)).length;
      const inc = body.map(l => l.match(/^\{\{#rustdoc_include ([^}\s]+)\s*\}\}$/)).find(Boolean);
      if (own || inc) {
        blocks.push({ md, own, file: inc ? path.resolve(path.dirname(mdFile), inc[1].split(':')[0]) : null });
      }
      i = j;
    }
  }
  return blocks;
}

/** Behind the eye icon, a fragment shows the whole file at its true
 * indentation: for every block that includes a file with `rustdoc_include`,
 * the text revealed, less the chapter's own hidden lines (`extern crate`),
 * is the file less its ANCHOR lines, line for line. */
async function checkRevealed(name, page) {
  const sources = hiddenBlocksOf(name);
  const revealed = await page.evaluate(async () => {
    const codes = Array.from(document.querySelectorAll('main pre code')).filter(c => c.querySelector('.boring'));
    // mdBook's eye icon (the copy button sits beside it in `.buttons`).
    const eye = c => c.parentElement.querySelector('button[title="Show hidden lines"], button[title="Hide lines"]');
    codes.forEach(c => eye(c)?.title === 'Show hidden lines' && eye(c).click());
    // reveal.js answers the class change in a mutation observer, a microtask
    // queued by the click, which runs before this await resumes.
    await Promise.resolve();
    const texts = codes.map(c => c.textContent);
    codes.forEach(c => eye(c)?.title === 'Hide lines' && eye(c).click());
    await Promise.resolve();
    const restored = codes.every(c => c.classList.contains('hide-boring') && !c.querySelector('.reindent'));
    return { texts, restored };
  });
  if (!check(name, revealed.texts.length === sources.length, `${revealed.texts.length} blocks with hidden lines on the page, the sources have ${sources.length}`)) return 0;
  let compared = 0;
  sources.forEach((source, k) => {
    if (!source.file) return;
    const got = revealed.texts[k].split('\n').slice(source.own).map(l => l.trimEnd());
    const want = fs.readFileSync(source.file, 'utf8').split('\n').filter(l => !/ANCHOR(_END)?:/.test(l)).map(l => l.trimEnd());
    while (got.length && got[got.length - 1] === '') got.pop();
    while (want.length && want[want.length - 1] === '') want.pop();
    const differs = got.findIndex((l, i) => l !== want[i]);
    const at = differs === -1 ? Math.min(got.length, want.length) : differs;
    const rel = path.relative(repo, source.file);
    check(name, differs === -1 && got.length === want.length,
      `${source.md}: the eye icon on ${rel} reveals line ${at + 1} as "${got[at] ?? '(nothing)'}", the file has "${want[at] ?? '(nothing)'}"`);
    compared++;
  });
  check(name, revealed.restored, 'hiding the lines again did not take the indentation back');
  return compared;
}

/** An included SVG is a picture, not text: the inline <svg> with the file's
 * aria-label is visible, keeps the file's viewBox, and draws the file's labels. */
async function checkSvg(name, page, out) {
  const source = out.lines.join('\n');
  const attr = key => (source.match(new RegExp(`<svg\\b[^>]*\\s${key}="([^"]*)"`)) || [])[1];
  const label = attr('aria-label');
  const viewBox = attr('viewBox');
  const texts = Array.from(source.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g), m => m[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').trim());
  const got = await page.evaluate(({ label, viewBox }) => {
    const svg = Array.from(document.querySelectorAll('main svg')).find(el => !label || el.getAttribute('aria-label') === label);
    if (!svg) return null;
    svg.scrollIntoView({ block: 'center' });
    const r = svg.getBoundingClientRect();
    const vb = svg.viewBox && svg.viewBox.baseVal;
    return {
      visible: r.width > 0 && r.height > 0 && svg.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }),
      size: `${Math.round(r.width)}x${Math.round(r.height)}`,
      viewBox: vb && vb.width ? `${vb.x} ${vb.y} ${vb.width} ${vb.height}` : null,
      texts: Array.from(svg.querySelectorAll('text'), t => t.textContent.trim()),
    };
  }, { label, viewBox });
  if (!check(name, got, `${out.spec}: no inline <svg>${label ? ` labelled "${label}"` : ''} in main`)) return;
  check(name, got.visible, `${out.spec}: the <svg> is in the page but not visible (${got.size})`);
  if (viewBox) {
    const want = viewBox.trim().split(/[\s,]+/).map(Number).join(' ');
    check(name, got.viewBox === want, `${out.spec}: the <svg> lost its viewBox (file: "${want}", page: ${got.viewBox})`);
  }
  check(name, got.texts.length === texts.length && got.texts.every((t, i) => t === texts[i]),
    `${out.spec}: the <svg> draws ${got.texts.length} labels, the file has ${texts.length} (first: "${got.texts[0]}" vs "${texts[0]}")`);
}

/** A CSS colour as computed ("rgb(r, g, b)" or "rgba(r, g, b, a)") as
 * [r, g, b, a], or null for "none" and the like. */
function rgba(css) {
  const m = /^rgba?\(([^)]+)\)$/.exec((css || '').trim());
  if (!m) return null;
  const [r, g, b, a = 1] = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
  return [r, g, b, a];
}

/** WCAG's contrast ratio of two opaque colours. */
function contrast(a, b) {
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map(v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** The figures (every inline `main svg[role="img"]`: the retry curve and the
 * two diagrams) fit the text column and suit the theme. On every page whose
 * sources include an SVG, at 1280 and at 390 px wide, in the light theme and
 * in coal (chosen the way mdBook's theme menu does: localStorage
 * `mdbook-theme` and the class on <html>, then a reload), each figure:
 *   - lies inside main's content box (1 px of slack), so nothing of it is
 *     cut off or scrolls;
 *   - draws its smallest label at 9 px or more, once scaled to the column;
 *   - is drawn on a card that does not glare on the page (contrast between
 *     the card's fill and the page's background under 1.5: white on white
 *     in light, a dark card on the dark page in coal, never white on coal);
 *   - has every label readable on that card (contrast 4.5 or more) and every
 *     stroke but the faint separators (class s-rule) visible on it (2 or
 *     more), so that an element the dark theme forgot to recolour fails.
 * A failure names the page, the figure (its aria-label), the width and the
 * theme. Screenshots of each chapter's figures, at both widths in both
 * themes, go to target/screenshots/figure-*.png. */
const FIGURE_WIDTHS = [1280, 390];
const FIGURE_THEMES = ['light', 'coal'];
const MIN_LABEL_PX = 9;
async function checkFigures(browser, origin) {
  const before = failures.length;
  const chapters = summaryChapters();
  const expected = chapters.map(ch => ({ name: ch.html, figures: chapterOutputs(ch.md).filter(o => o.svg).length })).filter(p => p.figures > 0);
  const total = expected.reduce((n, p) => n + p.figures, 0);
  check('figures', total > 0, 'no chapter includes an SVG, so no figure was checked');
  if (total > 0) expected.push({ name: 'print.html', figures: total });
  const shots = [];
  let measured = 0;
  let smallest = Infinity;
  for (const width of FIGURE_WIDTHS) {
    for (const theme of FIGURE_THEMES) {
      const context = await browser.newContext({ viewport: { width, height: width > 1000 ? 900 : 844 } });
      try {
        for (const { name, figures } of expected) {
          const where = `${width} px, ${theme} theme`;
          const { page } = await open(context, origin, name);
          await page.evaluate(theme => {
            localStorage.setItem('mdbook-theme', theme);
            const html = document.documentElement;
            html.classList.remove('light', 'rust', 'coal', 'navy', 'ayu');
            html.classList.add(theme);
          }, theme);
          await page.reload({ waitUntil: 'load' });
          const got = await page.evaluate(theme => {
            const html = document.documentElement;
            const main = document.querySelector('main');
            if (!main) return null;
            const cs = getComputedStyle(main);
            const m = main.getBoundingClientRect();
            const column = {
              left: m.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft),
              right: m.right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight),
            };
            // The page's background: the first opaque one from main up.
            let pageBg = 'rgb(255, 255, 255)';
            for (let el = main; el; el = el.parentElement) {
              const bg = getComputedStyle(el).backgroundColor;
              if (bg && bg !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(bg)) { pageBg = bg; break; }
            }
            const figures = Array.from(main.querySelectorAll('svg[role="img"]'), svg => {
              const r = svg.getBoundingClientRect();
              const vb = svg.viewBox && svg.viewBox.baseVal;
              const scale = vb && vb.width ? r.width / vb.width : 1;
              const card = svg.querySelector('.f-paper') || svg.querySelector('rect');
              const paint = el => {
                const s = getComputedStyle(el);
                return { tag: el.tagName.toLowerCase(), cls: el.getAttribute('class') || '', text: el.tagName === 'text' ? el.textContent.trim() : '', fill: s.fill, stroke: s.stroke, px: parseFloat(s.fontSize) * scale };
              };
              return {
                label: svg.getAttribute('aria-label') || '(no aria-label)',
                left: r.left, right: r.right, width: r.width,
                card: card ? getComputedStyle(card).fill : null,
                elements: Array.from(svg.querySelectorAll('text, line, polyline, polygon, path, rect, circle'), paint),
              };
            });
            return { theme: html.classList.contains(theme), column, pageBg, figures };
          }, theme);
          if (!check(name, got, `${where}: no <main> element`)) { await page.close(); continue; }
          check(name, got.theme, `${where}: the page did not take the ${theme} theme from localStorage mdbook-theme`);
          check(name, got.figures.length === figures, `${where}: ${got.figures.length} figures (svg[role="img"]) in main, its sources include ${figures} SVGs`);
          const pageBg = rgba(got.pageBg);
          got.figures.forEach((f, i) => {
            const what = `figure "${f.label}" at ${where}`;
            measured += 1;
            check(name, f.left >= got.column.left - 1 && f.right <= got.column.right + 1,
              `${what}: spans x ${Math.round(f.left)}..${Math.round(f.right)}, outside the text column ${Math.round(got.column.left)}..${Math.round(got.column.right)}`);
            const texts = f.elements.filter(e => e.tag === 'text');
            if (texts.length) {
              const tiny = texts.reduce((a, b) => (b.px < a.px ? b : a));
              smallest = Math.min(smallest, tiny.px);
              check(name, tiny.px >= MIN_LABEL_PX - 0.05, `${what}: the label "${tiny.text}" is drawn at ${tiny.px.toFixed(1)} px, under ${MIN_LABEL_PX} px (the figure is ${Math.round(f.width)} px wide)`);
            }
            const card = rgba(f.card);
            if (!check(name, card && card[3] > 0, `${what}: no card (the first rect, or class f-paper) with a fill`)) return;
            const glare = contrast(card, pageBg);
            check(name, glare < 1.5, `${what}: its card (${f.card}) glares on the page (${got.pageBg}): contrast ${glare.toFixed(2)}, want under 1.5`);
            for (const e of texts) {
              const fill = rgba(e.fill);
              const c = fill ? contrast(fill, card) : 0;
              if (!check(name, c >= 4.5, `${what}: the label "${e.text}" (${e.fill}, class "${e.cls}") has contrast ${c.toFixed(2)} on the card (${f.card}), want 4.5 or more`)) break;
            }
            for (const e of f.elements.filter(e => e.tag !== 'text' && !/\bs-rule\b/.test(e.cls))) {
              const stroke = rgba(e.stroke);
              if (!stroke || stroke[3] === 0) continue;
              const c = contrast(stroke, card);
              if (!check(name, c >= 2, `${what}: a <${e.tag} class="${e.cls}"> is stroked ${e.stroke}, contrast ${c.toFixed(2)} on the card (${f.card}), want 2 or more`)) break;
            }
          });
          if (name !== 'print.html') {
            const svgs = page.locator('main svg[role="img"]');
            for (let i = 0; i < await svgs.count(); i++) {
              const file = path.join(SHOTS, `figure-${name.replace(/\.html$/, '')}-${i + 1}-${width}-${theme}.png`);
              await svgs.nth(i).screenshot({ path: file });
              shots.push(file);
            }
          }
          await page.close();
        }
      } finally {
        await context.close();
      }
    }
  }
  const info = [`${measured} figure views (${FIGURE_WIDTHS.join(' and ')} px, ${FIGURE_THEMES.join(' and ')})`];
  if (Number.isFinite(smallest)) info.push(`smallest label ${smallest.toFixed(1)} px`);
  info.push(`${shots.length} screenshots ${path.relative(repo, SHOTS) || '.'}/figure-*.png`);
  return { name: 'figures', ok: failures.length === before, ms: 0, info };
}

/** Every code and output block fits the text column. In a browser context of
 * its own (so that the language it switches to is nobody else's), every page
 * is opened at 1280 px wide with every `<details>` of main open, and each
 * visible `main pre` is measured: neither the pre nor the code inside it (the
 * box that scrolls in mdBook's theme) may be wider than it shows (1 px of
 * slack), or the reader gets a horizontal scroll bar. A page with Rust/Go
 * tabs is measured with Rust shown, then again with Go. A failure names the
 * page and the block: its first line, its caption or the heading above it,
 * and by how many pixels it overflows. The same at 390 px wide (a phone) is
 * only counted, and reported as a note per page. */
const FIT_WIDTHS = [{ width: 1280, height: 900, fail: true }, { width: 390, height: 844, fail: false }];
async function checkCodeFits(browser, origin, pages) {
  const before = failures.length;
  const info = [];
  for (const { width, height, fail } of FIT_WIDTHS) {
    const context = await browser.newContext({ viewport: { width, height } });
    let blocks = 0;
    let overflowing = 0;
    try {
      for (const name of pages) {
        const { page } = await open(context, origin, name);
        const seen = new Map(); // block index -> its measure, over both languages
        const languages = (await page.locator('main .lang-tabs').count()) > 0 ? ['rust', 'go'] : [null];
        for (const lang of languages) {
          if (lang) await page.locator('main .lang-tabs').first().locator(`[role="tab"][data-lang="${lang}"]`).click();
          const measured = await page.evaluate(() => {
            for (const d of document.querySelectorAll('main details')) d.open = true;
            const shown = el => {
              const r = el.getBoundingClientRect();
              return r.width > 0 && r.height > 0 && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
            };
            // The caption under the block, else the heading above it.
            const label = pre => {
              let top = pre;
              while (top.parentElement && top.parentElement.tagName !== 'MAIN') top = top.parentElement;
              for (let el = top.nextElementSibling, i = 0; el && i < 4; el = el.nextElementSibling, i++) {
                if (el.matches('pre, h1, h2, h3, h4, .lang-tabs')) break;
                const caption = el.matches('.caption') ? el : el.querySelector('.caption');
                if (caption) return caption.innerText.split(' · ')[0].trim().slice(0, 80);
              }
              for (let el = top; el && el.tagName !== 'MAIN'; el = el.previousElementSibling || el.parentElement) {
                if (/^H[1-4]$/.test(el.tagName)) return `under "${el.innerText.trim()}"`;
              }
              return 'at the top of the page';
            };
            return Array.from(document.querySelectorAll('main pre'), (pre, index) => {
              if (!shown(pre)) return null;
              const boxes = [pre, ...pre.querySelectorAll(':scope > code')];
              const over = Math.max(...boxes.map(b => b.scrollWidth - b.clientWidth));
              const first = (pre.innerText.split('\n').find(l => l.trim()) || '').trim().slice(0, 60);
              return { index, over, first, label: label(pre), lang: (pre.querySelector('code')?.className.match(/language-(\w+)/) || [])[1] || '?' };
            }).filter(Boolean);
          });
          for (const m of measured) if (!seen.has(m.index) || m.over > seen.get(m.index).over) seen.set(m.index, m);
        }
        await page.close();
        const wide = [...seen.values()].filter(m => m.over > 1);
        blocks += seen.size;
        overflowing += wide.length;
        if (fail) {
          for (const m of seen.values()) {
            check(name, m.over <= 1, `a ${m.lang} block is ${m.over} px wider than the text column at ${width} px (it scrolls sideways): "${m.first}", ${m.label}`);
          }
        } else if (wide.length) {
          notes.push({ page: name, note: `${wide.length} of ${seen.size} code and output blocks scroll sideways at ${width} px` });
        }
      }
    } finally {
      await context.close();
    }
    info.push(`${overflowing} of ${blocks} blocks overflow at ${width} px`);
  }
  return { name: 'code fits the column', ok: failures.length === before, ms: 0, info };
}

/** The performance appendix: the stamp of its run, and the Go comparison. */
const PERF_COLUMNS = ['workload', 'Go ops/s', 'Rust ops/s', 'Rust/Go (runs)', 'floor ops/s', 'floor/Rust (runs)', 'targets'];
const PERF_ROWS = ['cycles-1', 'cycles-2', 'cycles-8', 'burst', 'delaying', 'priority', 'queue'];
async function checkPerformancePage(name, page) {
  const seen = await page.evaluate(() => {
    const main = document.querySelector('main');
    const stamp = [...main.querySelectorAll('p')].find(p => /^Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on /.test(p.innerText));
    const table = main.querySelector('table');
    if (!table) return { stamp: !!stamp };
    const box = table.getBoundingClientRect();
    const wrapper = table.parentElement;
    return {
      stamp: !!stamp && stamp.getBoundingClientRect().height > 0,
      headers: [...table.querySelectorAll('thead th')].map(th => th.innerText.trim()),
      rows: [...table.querySelectorAll('tbody tr')].map(tr => tr.querySelector('td')?.innerText.trim()),
      visible: box.width > 0 && box.height > 0,
      scrolls: wrapper.scrollWidth > wrapper.clientWidth + 1,
    };
  });
  check(name, seen.stamp, 'no visible "Measured <date> UTC on <machine>" line: the page was not written by `cargo xtask perf --write`');
  check(name, JSON.stringify(seen.headers) === JSON.stringify(PERF_COLUMNS),
    `the first table is not the Go comparison: its columns are ${JSON.stringify(seen.headers)}`);
  check(name, seen.visible, 'the Go comparison table is not visible');
  for (const row of PERF_ROWS) check(name, seen.rows?.includes(row), `the Go comparison has no row ${row}`);
  if (seen.scrolls) notes.push({ page: name, note: 'the Go comparison table scrolls sideways at 1280 px' });
  return seen;
}

async function checkSearch(name, page) {
  await page.locator('main').click({ position: { x: 5, y: 5 } }).catch(() => {});
  await page.keyboard.press('s');
  const bar = page.locator('#mdbook-searchbar');
  try {
    await bar.waitFor({ state: 'visible', timeout: 5000 });
  } catch {
    // The keyboard shortcut did nothing: try the toolbar button a reader would click.
    await page.locator('#mdbook-search-toggle').click();
    if (!check(name, await bar.isVisible(), 'search: neither `s` nor the search toggle opened the search bar')) return;
  }
  await bar.fill('');
  await bar.pressSequentially('Forget', { delay: 30 });
  const results = page.locator('#mdbook-searchresults > li');
  const found = await results.first().waitFor({ state: 'visible', timeout: 10000 }).then(() => true, () => false);
  const count = await results.count();
  const header = (await page.locator('#mdbook-searchresults-header').innerText().catch(() => '')).trim();
  check(name, found && count >= 1, `search: "Forget" found no visible result (header: "${header}")`);
  return { count, header };
}

// ---------------------------------------------------------------- the run

async function main() {
  if (!fs.existsSync(path.join(BOOK, 'index.html'))) {
    console.error(`browser-test: ${BOOK}/index.html is missing: render the book first (cargo xtask book)`);
    process.exit(2);
  }
  if (!fs.existsSync(CHROMIUM)) {
    console.error(`browser-test: ${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
    process.exit(2);
  }
  const chapters = summaryChapters();
  const pages = htmlPages(BOOK);
  for (const ch of chapters) check(ch.html, pages.includes(ch.html), `src/SUMMARY.md lists "${ch.title}" but book/ has no ${ch.html}`);
  fs.mkdirSync(SHOTS, { recursive: true });
  const server = await serve();
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  console.log(`browser-test: ${pages.length} pages of ${BOOK} on ${origin}, Chromium ${browser.version()}`);

  const report = [];
  try {
    for (const name of pages) {
      const before = failures.length;
      const t0 = Date.now();
      const { page, seen } = await open(context, origin, name);
      const info = [];
      const links = await sidebarLinks(page);
      checkSidebar(name, links, chapters, name !== 'toc.html');
      if (name !== 'toc.html') {
        const blocks = await checkPlayButtons(name, page, seen);
        info.push(`${blocks.length} code block${blocks.length === 1 ? "" : "s"}`);
        const chapter = chapters.find(ch => ch.html === name);
        const outputs = chapter ? chapterOutputs(chapter.md)
          : name === 'print.html' ? chapters.flatMap(ch => chapterOutputs(ch.md)) : [];
        const folded = await checkCaptionsAndTwins(name, page);
        if (folded.captions) info.push(`${folded.captions} captions`);
        if (folded.twins) info.push(`${folded.twins} Rust/Go tab pairs`);
        if (folded.runs) info.push(`${folded.runs} "Run it with" lines`);
        if (folded.outputs) info.push(`${folded.outputs} whole outputs unfolded`);
        if (folded.downloads) info.push(`${folded.downloads} download links`);
        const compared = await checkRevealed(name, page);
        if (compared) info.push(`${compared} revealed files`);
        if (outputs.length) {
          await checkOutputs(name, page, outputs);
          info.push(`${outputs.length} output${outputs.length === 1 ? "" : "s"}`);
        }
        if (name === 'performance.html') {
          const perf = await checkPerformancePage(name, page);
          if (perf.rows) info.push(`Go comparison: ${perf.rows.length} rows`);
        }
        if (name === 'index.html') {
          const search = await checkSearch(name, page);
          if (search) info.push(`search "Forget": ${search.count} results`);
        }
        if (SCREENSHOT_PAGES.includes(name)) {
          await page.evaluate(() => window.scrollTo(0, 0));
          const file = path.join(SHOTS, name.replace(/\.html$/, '.png'));
          await page.screenshot({ path: file, fullPage: true });
          info.push(`screenshot ${path.relative(repo, file)}`);
        }
      }
      await page.close();
      report.push({ name, ok: failures.length === before, ms: Date.now() - t0, info });
    }

    report.push(await checkTabsElsewhere(browser, origin));
    report.push(await checkFigures(browser, origin));
    report.push(await checkCodeFits(browser, origin, pages));

    // The book has no runnable block, so the checks above never see the crate
    // list or a play button: the canary shows they would.
    const before = failures.length;
    const { page, seen } = await open(context, origin, CANARY);
    const blocks = await checkPlayButtons(CANARY, page, seen);
    check(CANARY, blocks.find(b => b.id === 'canary-runnable')?.visible, 'the std/tokio/anyhow block shows no play button after the crate list answer');
    check(CANARY, blocks.find(b => b.id === 'canary-workspace')?.button, 'the faithful_workqueue block got no (hidden) play button at all');
    await page.close();
    report.push({ name: `${CANARY} (synthetic)`, ok: failures.length === before, ms: 0, info: [`crate list requested ${seen.crates}x`] });
  } finally {
    await context.close();
    await browser.close();
    server.close();
  }

  console.log('');
  for (const r of report) console.log(`${r.ok ? 'ok  ' : 'FAIL'}  ${r.name.padEnd(34)} ${r.info.join(', ')}`);
  for (const n of notes) console.log(`note  ${n.page}: ${n.note}`);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (failures.length) {
    console.log(`\nbrowser-test: ${failures.length} failure(s) in ${checks} checks (${secs}s):`);
    for (const f of failures) console.log(`  ${f.page}: ${f.reason}`);
    process.exit(1);
  }
  console.log(`\nbrowser-test: all ${checks} checks passed on ${pages.length} pages (${secs}s)`);
}

main().catch(err => {
  console.error(`browser-test: ${err.stack || err}`);
  process.exit(1);
});
