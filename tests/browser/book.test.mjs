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
// "Listing N-M:" and links archives present in book/downloads/, every folded Go twin (`details.twin`) and every long output
// folded whole under its excerpt (`details.output`) starts closed and shows
// its code once its summary is clicked; then every `{{#include ../listings/...}}`
// (outputs, and the Go lines now unfolded) is rendered verbatim, visible, with its
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
function chapterOutputs(md) {
  const mdFile = path.join(SRC, md);
  const text = fs.readFileSync(mdFile, 'utf8');
  const outputs = [];
  for (const m of text.matchAll(/\{\{#include\s+(\.\.\/listings\/[^\s}]+)\s*\}\}/g)) {
    const lines = includedText(mdFile, m[1]).split('\n').map(l => l.trimEnd());
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

/** Captions under listings are visible and numbered; each folded Go twin,
 * and each long output folded whole under its excerpt, is closed at first
 * and shows a non-empty code block once its summary is clicked (and stays
 * open, so the output checks below can see its lines). */
async function checkCaptionsAndTwins(name, page) {
  const captions = await page.evaluate(() => Array.from(document.querySelectorAll('main .caption')).map(el => {
    el.scrollIntoView({ block: 'center' });
    const r = el.getBoundingClientRect();
    return { text: el.innerText.trim(), visible: r.width > 0 && r.height > 0 && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) };
  }));
  for (const c of captions) {
    check(name, /^Listing \d+-\d+: /.test(c.text), `caption "${c.text.slice(0, 60)}" does not start with "Listing N-M: "`);
    check(name, c.visible, `caption "${c.text.slice(0, 60)}" is not visible`);
  }
  // A caption's download links name archives that `cargo xtask book` wrote.
  const downloads = await page.evaluate(() => Array.from(document.querySelectorAll('main .caption a'), a => a.getAttribute('href')));
  for (const href of downloads) {
    check(name, /^downloads\/listing-\d\d-\d\d(-go)?\.tar\.gz$/.test(href), `caption link "${href}" is not an archive under downloads/`);
    check(name, fs.existsSync(path.join(BOOK, href)), `caption link "${href}": no such file in the rendered book`);
  }
  // Go twins and long outputs fold the same way.
  const unfold = async (selector, what) => {
    const count = await page.locator(selector).count();
    for (let i = 0; i < count; i++) {
      const details = page.locator(selector).nth(i);
      const closed = await details.evaluate(d => !d.open);
      check(name, closed, `${what} #${i + 1} is unfolded before anyone clicks it`);
      await details.locator('summary').click();
      const shown = await details.evaluate(d => {
        const code = d.querySelector('pre code');
        if (!d.open || !code) return false;
        const r = code.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && code.textContent.trim().length > 0;
      });
      check(name, shown, `${what} #${i + 1} shows no code after its summary is clicked`);
    }
    return count;
  };
  const twins = await unfold('main details.twin', 'Go twin');
  const outputs = await unfold('main details.output', 'folded output');
  return { captions: captions.length, twins, outputs, downloads: downloads.length };
}

/** Every included output on the page: its first and last non-empty lines are in
 * main's innerText, the smallest element holding each is visible, and some code
 * block renders the whole file verbatim. */
async function checkOutputs(name, page, outputs) {
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
    const verbatim = await page.evaluate(lines => Array.from(document.querySelectorAll('main pre code')).some(code => {
      const got = code.textContent.split('\n').map(l => l.trimEnd());
      while (got.length && got[got.length - 1] === '') got.pop();
      while (got.length && got[0] === '') got.shift();
      return got.length === lines.length && got.every((l, i) => l === lines[i]);
      // mdBook has highlight.js show a tab as four spaces (Go is indented with tabs).
    }), out.lines.map(l => l.replace(/\t/g, '    ')));
    check(name, verbatim, `${out.spec}: no code block holds the file verbatim (${out.lines.length} lines)`);
  }
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
        if (folded.captions) info.push(`${folded.captions} captions, ${folded.twins} Go twins unfolded`);
        if (folded.outputs) info.push(`${folded.outputs} whole outputs unfolded`);
        if (folded.downloads) info.push(`${folded.downloads} download links`);
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
