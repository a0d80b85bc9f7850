"""Check the built docs site (_docs/) in headless Chromium, through the DevTools protocol.

Serves the site under its `doc_baseurl` (as GitHub Pages will), opens every page listed in the sidebar in a 1400x900
window and checks:
  * it loads with no failed request for a local file, no JavaScript exception, and its title (the notebook's `# Title`);
  * it shows as many code examples as its notebook has visible code cells (API docs: see `check_api_anchors`);
  * every local link and asset on it exists, and every `#anchor` into the site (also written as a `doc_host` URL, as
    nbdev links names) exists on its target page;
  * math is rendered (MathML with a real size; no raw `\\(`, `\\[` or `$$` left in the prose) on pages whose notebook has math;
  * each page whose notebook holds plotly figures shows that many rendered figures (plotly's SVG drawn in the page);
  * it requests nothing from another host (figures, math and fonts come from the site itself);
  * no code block or output needs sideways scrolling (`check_overflow`);
  * its text shows no machine path, Python warning, `<factory>` default or made-up annotation (`check_page_text`);
  * its `show_doc` signatures show no raw markdown link and every dataclass field with its comment (`check_signatures`);
  * no paragraph ending in ':' is left with nothing to introduce (`check_colons`);
  * no two labels of a plotly figure overlap, none is cut or outside the figure (`check_figure_labels`).
Also: the home page names every shipped experiment, has a table of the config keys they set (`check_home`) and a link
to the repository (settings.ini `git_url`) in its top bar (`check_repo_link`); every exported symbol of lengen/_modidx.py
has its `show_doc` anchor on its module's page, every notebook has a page in the sidebar, every console script in
settings.ini has its `--help` on cli.html, no results/**/*.json of the repository holds an absolute path
(`check_results`), and the search box finds pages.
`--screenshots DIR` saves a PNG of each page, scrolled to its first figure or equation, and one of a search.

usage: python tools/check_site.py [--site _docs] [--chromium chromium] [--screenshots DIR]
Exit status 0 when everything holds, 1 otherwise (each problem on its own line).
"""
import argparse, base64, configparser, functools, http.server, json, math, re, shutil, subprocess, sys, tempfile, threading, time
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import websocket  # websocket-client: installed with jupyter_server (the dev extra)
import yaml       # PyYAML: installed with omegaconf

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--window-size=1400,900", "--remote-debugging-port=0"]
HIDDEN_RE = re.compile(r"^#\|\s*(hide|export|exporti|exports|default_exp|echo:\s*false|include:\s*false)\b|^show_doc\(", re.M)
MATH_RE = re.compile(r"\$\$|\$[^\s$][^$\n]*\$|\\\(|\\\[")


class Chromium:
    "A headless Chromium with a fresh profile, driven over the DevTools protocol; events are kept per page load."
    def __init__(self, exe:str):
        self.profile = tempfile.mkdtemp(prefix="check_site_")
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file, t0 = Path(self.profile)/"DevToolsActivePort", time.time()
        while not (port_file.exists() and len(port_file.read_text().split()) == 2):
            if time.time() - t0 > 60 or self.proc.poll() is not None: raise RuntimeError(f"{exe} did not start")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        url = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
        self.ws = websocket.create_connection(url, timeout=120, suppress_origin=True)
        self.n, self.events = 0, []
        for dom in ("Page", "Network", "Runtime", "Log"): self.send(f"{dom}.enable")

    def send(self, method:str, **params):
        "Call a DevTools method; events that arrive meanwhile are stored in `self.events`."
        self.n += 1
        self.ws.send(json.dumps(dict(id=self.n, method=method, params=params)))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.n:
                if "error" in msg: raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            self.events.append(msg)

    def js(self, expr:str):
        "Value of a JavaScript expression (awaited if it is a promise)."
        r = self.send("Runtime.evaluate", expression=expr, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r: raise RuntimeError(f"{expr[:80]}...: {r['exceptionDetails']}")
        return r["result"].get("value")

    def load(self, url:str, settle_js:str, timeout:float=30):
        "Open `url`, wait for its load event, then until `settle_js` is true (figures drawn) or `timeout`."
        self.events = []
        self.send("Page.navigate", url=url)
        t0 = time.time()
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.time() - t0 > timeout: raise RuntimeError(f"{url}: no load event in {timeout} s")
            self.events.append(json.loads(self.ws.recv()))
        while time.time() - t0 < timeout and not self.js(settle_js): time.sleep(0.2)
        time.sleep(0.3)
        self.js("0")   # collect the events of the last moments

    def screenshot(self, path:Path):
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self):
        self.proc.terminate(); self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)


def serve(site:Path, baseurl:str) -> tuple[str, http.server.ThreadingHTTPServer]:
    "Serve `site` at http://127.0.0.1:PORT{baseurl}/ from a temporary root (as GitHub Pages serves a project site)."
    root = Path(tempfile.mkdtemp(prefix="site_root_"))
    (root/baseurl.strip("/")).parent.mkdir(parents=True, exist_ok=True)
    (root/baseurl.strip("/")).symlink_to(site.resolve(), target_is_directory=True)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{srv.server_address[1]}{baseurl.rstrip('/')}/", srv


def notebook_facts(nbs:Path) -> dict[str, dict]:
    "Per page (path relative to the site, .html): the notebook's title, whether its prose has math, its plotly figures."
    facts = {}
    for nb_path in sorted(nbs.rglob("*.ipynb")):
        rel = nb_path.relative_to(nbs)
        if any(p.startswith((".", "_")) for p in rel.parts) or ".ipynb_checkpoints" in rel.parts: continue
        cells = json.loads(nb_path.read_text())["cells"]
        md = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        title = next((m.group(1).strip() for s in md for m in [re.match(r"#\s+(.+)", s)] if m), None)
        figs = sum("application/vnd.plotly.v1+json" in o.get("data", {}) or "Plotly.newPlot" in "".join(o.get("data", {}).get("text/html", ""))
                   for c in cells for o in c.get("outputs", []))
        page = rel.with_name(re.sub(r"^\d+[a-zA-Z0-9]*_", "", rel.name.lower())).with_suffix(".html")   # nbdev's page name
        prose = [re.sub(r"```.*?```|`[^`\n]*`", "", s, flags=re.S) for s in md]                           # code is not math
        shown = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip() and not HIDDEN_RE.search("".join(c["source"]))]
        facts[page.as_posix()] = dict(title=re.sub(r"`([^`]*)`", r"\1", title or "") or None, examples=len(shown),
                                      math=any(MATH_RE.search(s) for s in prose), figures=figs, nb=rel.as_posix())
    return facts


PAGE_JS = r"""(() => {
  const visible = [];
  const walk = n => { if (n.nodeType === 3) visible.push(n.textContent);
    else if (n.nodeType === 1 && !['CODE', 'PRE', 'SCRIPT', 'STYLE', 'MATH', 'NOSCRIPT'].includes(n.tagName) && !n.classList.contains('sourceCode'))
      n.childNodes.forEach(walk); };
  const main = document.querySelector('main') || document.body;
  const introduces = e => e && e.matches(   // what a paragraph ending in ':' may stand before (hr: a show_doc)
    'div.cell, .sourceCode, .code-copy-outer-scaffold, pre, ul, ol, dl, table, figure, .quarto-figure, div.cell-output, blockquote, .callout, hr');
  walk(main);
  const maths = [...document.querySelectorAll('main math')];
  const figs = [...document.querySelectorAll('.plotly-graph-div')];
  const corners = t => { const b = t.getBBox(), m = t.getScreenCTM();   // a label's box, rotation included
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
  const longest = p => p.innerText.split('\n').reduce((a, b) => b.length > a.length ? b : a, '');
  return {
    title: document.title, h1: (document.querySelector('h1.title') || {}).textContent || '',
    text: visible.join(' '), shown: main.innerText,
    tables: [...main.querySelectorAll('table')].map(t => t.innerText),
    wide_code: [...main.querySelectorAll('pre')].filter(p => p.scrollWidth > p.clientWidth + 1).map(longest),
    signatures: [...main.querySelectorAll(':is(h2, h3, h4, h5, h6).anchored + :is(.code-copy-outer-scaffold, .sourceCode) pre')]
                .map(p => p.innerText),
    colons: [...main.querySelectorAll('p')].filter(p => p.innerText.trim().endsWith(':') && !introduces(p.nextElementSibling))
            .map(p => p.innerText.trim()),
    figure_labels: figs.map(f => { const r = f.getBoundingClientRect();
      return {box: [r.left, r.top, r.right, r.bottom],
              labels: [...f.querySelectorAll('svg text')].filter(t => t.textContent.trim() && t.getBBox().width > 0)
                      .map(t => ({text: t.textContent.trim(), tick: !!t.closest('.xtick, .ytick'), corners: corners(t)}))}; }),
    navbar: [...document.querySelectorAll('#quarto-header a[href]')].map(a => a.href),
    examples: document.querySelectorAll('main div.cell .cell-code').length,
    math: maths.length, math_sized: maths.filter(m => m.getBoundingClientRect().width > 0).length,
    figures: figs.length, figures_drawn: figs.filter(f => f.querySelector('svg.main-svg g.trace')).length,
    refs: [...document.querySelectorAll('a[href]')].map(a => a.href)
          .concat([...document.querySelectorAll('script[src], img[src], iframe[src]')].map(e => e.src))
          .concat([...document.querySelectorAll('link[href]')].filter(l => l.rel !== 'canonical').map(l => l.href)),
    sidebar: [...document.querySelectorAll('#quarto-sidebar a.sidebar-link[href]')].map(a => [a.href, a.textContent.trim()]),
    search: !!document.querySelector('#quarto-search'),
  };
})()"""
SETTLE_JS = "[...document.querySelectorAll('.plotly-graph-div')].every(f => f.querySelector('svg.main-svg g.trace'))"
SHOT_JS = """(() => { const e = document.querySelector('.plotly-graph-div, main math[display=block], main math');
  if (e) e.scrollIntoView({block: 'center'}); return !!e; })()"""
SEARCH_JS = """(async (q) => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const button = document.querySelector('#quarto-search .aa-DetachedSearchButton, #quarto-search button');
  if (button) button.click();
  await sleep(500);
  const input = document.querySelector('.aa-Input');
  if (!input) return {error: 'no search input'};
  input.focus(); input.value = q; input.dispatchEvent(new Event('input', {bubbles: true}));
  for (let i = 0; i < 50 && !document.querySelector('.aa-Item'); i++) await sleep(100);
  return {items: [...document.querySelectorAll('.aa-Item a')].map(a => a.href)};
})"""


def plain(text:str) -> str:
    "Text with quarto's typographic quotes and dashes made plain, for comparing titles."
    return text.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"}))


def ids_of(path:Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(errors="replace")))


def check_site(site:Path, chromium:str, shots:Path|None=None) -> list[str]:
    cfg = configparser.ConfigParser(); cfg.read(ROOT/"settings.ini")
    ini = cfg["DEFAULT"]
    baseurl, nbs, lib = ini.get("doc_baseurl", "/"), ROOT/ini.get("nbs_path", "nbs"), ROOT/ini.get("lib_path", "lengen")
    published = ini.get("doc_host", "").rstrip("/") + baseurl.rstrip("/") + "/"   # nbdev links names with this URL
    facts, problems, external = notebook_facts(nbs), check_results(ROOT/"results"), set()
    base, srv = serve(site, baseurl)
    local = lambda u: u.startswith(base)
    file_of = lambda u: site/(urlparse(urldefrag(u)[0]).path[len(urlparse(base).path):] or "index.html")
    browser = Chromium(chromium)
    try:
        browser.load(base, SETTLE_JS)
        sidebar = browser.js(PAGE_JS)["sidebar"]
        pages = {urldefrag(u)[0][len(base):] or "index.html": t for u, t in sidebar if local(u)}
        if not pages: problems.append("index.html: no sidebar links")
        problems += [f"{f['nb']}: no page ({p}) in the sidebar" for p, f in facts.items() if p not in {*pages, "index.html"}]
        checked_refs = {}
        for rel, link_text in {"index.html": "", **pages}.items():
            t0 = time.time()
            browser.load(base + rel, SETTLE_JS)
            d, ev = browser.js(PAGE_JS), browser.events
            say = lambda msg: problems.append(f"{rel}: {msg}")
            for e in ev:
                m, p = e.get("method"), e.get("params", {})
                if m == "Network.responseReceived" and p["response"]["status"] >= 400 and local(p["response"]["url"]):
                    say(f"HTTP {p['response']['status']} for {p['response']['url'][len(base):]}")
                if m == "Network.loadingFailed":
                    req = next((x["params"]["request"]["url"] for x in ev if x.get("method") == "Network.requestWillBeSent"
                                and x["params"]["requestId"] == p["requestId"]), "?")
                    if local(req): say(f"request failed: {req[len(base):]} ({p.get('errorText')})")
                if m == "Network.requestWillBeSent":
                    u = p["request"]["url"]
                    if u.startswith("http") and not local(u): external.add(f"{rel}: request to another host, {urlparse(u).netloc}")
                if m == "Runtime.exceptionThrown":
                    det = p["exceptionDetails"]; say(f"JavaScript exception: {det.get('exception', {}).get('description', det.get('text'))[:300]}")
            f = facts.get(rel, {})
            want = plain(f.get("title") or link_text)
            d["h1"], d["title"] = plain(d["h1"]), plain(d["title"])
            if not d["h1"].strip(): say("no title (h1.title)")
            elif want and d["h1"].strip() != want: say(f"title {d['h1'].strip()!r}, expected {want!r}")
            if want and want not in d["title"]: say(f"document title {d['title']!r} lacks {want!r}")
            if not d["search"]: say("no search box")
            raw = MATH_RE.findall(d["text"])
            if raw: say(f"raw TeX in the prose: {raw[:3]}")
            if f.get("math") and not d["math"]: say("its notebook has math but the page has no rendered <math>")
            if d["math"] != d["math_sized"]: say(f"{d['math'] - d['math_sized']} of {d['math']} equations have no size (not rendered)")
            if f.get("examples", 0) != d["examples"]: say(f"{d['examples']} code examples on the page, its notebook shows {f.get('examples', 0)}")
            if f.get("figures", 0) != d["figures"]: say(f"{d['figures']} plotly figures on the page, its notebook has {f.get('figures', 0)}")
            if d["figures_drawn"] != d["figures"]: say(f"only {d['figures_drawn']} of {d['figures']} plotly figures drawn (SVG)")
            for ref in d["refs"]:
                if ref.startswith(published): ref = base + ref[len(published):]
                if not local(ref) or ref in checked_refs: continue
                target, frag = urldefrag(ref); frag = unquote(frag)
                path = file_of(target)
                if path.is_dir(): path = path/"index.html"
                ok = path.is_file() and (not frag or path.suffix != ".html" or frag in ids_of(path))
                checked_refs[ref] = ok
                if not ok: say(f"broken link or asset: {ref[len(base):]}")
            seen = check_overflow(d) + check_page_text(d, str(rel)) + check_signatures(d) + check_colons(d) + check_figure_labels(d)
            if rel == "index.html": seen += check_home(d, lib) + check_repo_link(d, ini.get("git_url", ""))
            for msg in seen: say(msg)
            if shots:
                browser.js(SHOT_JS); time.sleep(0.3)
                browser.screenshot(shots/(rel.replace("/", "__").removesuffix(".html") + ".png"))
            print(f"  {rel}: {d['h1'].strip()!r}, {d['examples']} examples, {d['math']} equations, {d['figures_drawn']}/{d['figures']} figures, "
                  f"{len(d['refs'])} links ({time.time() - t0:.1f} s)")
        problems += check_api_anchors(site) + check_console_scripts(site, cfg["DEFAULT"].get("console_scripts", ""))
        browser.load(base + "index.html", SETTLE_JS)
        found = browser.js(f"({SEARCH_JS})('window')")
        hits = [u for u in found.get("items", []) if local(u)]
        if not hits: problems.append(f"search for 'window' found no page: {found}")
        else: print(f"  search 'window': {len(hits)} results, first {hits[0][len(base):]}")
        if shots: browser.screenshot(shots/"search.png")
    finally:
        browser.close(); srv.shutdown()
    return problems + [f"{e} (the site must work offline)" for e in sorted(external)]


def check_home(d:dict, lib:Path) -> list[str]:
    "The home page names every shipped experiment and has a table with every config key that the shipped configs set."
    experiments = sorted(p.stem for p in lib.glob("**/conf/experiment/*.yaml"))
    keys = sorted({k for f in lib.glob("**/conf/*/*.yaml") for k in leaf_keys(yaml.safe_load(f.read_text()) or {})})
    tables, word = "\n".join(d["tables"]), lambda w, text: re.search(rf"(?<![\w.]){re.escape(w)}(?![\w.])", text)
    missing = [e for e in experiments if not word(e, d["shown"])]
    # a key, or a dotted parent of it: a dict-valued field (schedule.kwargs for schedule.kwargs.min_lr_rate)
    unlisted = [k for k in keys if not any(word(k.rsplit(".", i)[0], tables) for i in range(max(k.count("."), 1)))]
    problems = [f"{len(missing)} of {len(experiments)} shipped experiments not named, e.g. {missing[:3]}"] if missing else []
    if unlisted: problems.append(f"no table lists {len(unlisted)} of the {len(keys)} config keys the shipped configs set, e.g. {unlisted[:3]}")
    return problems


def leaf_keys(tree:dict, prefix:str="") -> list[str]:
    "Dotted keys of the leaves of a Hydra config file (its `defaults` list left out)."
    return [k for name, v in tree.items() if not (name == "defaults" and not prefix)
            for k in (leaf_keys(v, f"{prefix}{name}.") if isinstance(v, dict) else [prefix + name])]


def check_overflow(d:dict) -> list[str]:
    "No `pre` (code, output, signature) is wider than its box: nothing needs sideways scrolling in the 1400 px window."
    if not d["wide_code"]: return []
    return [f"{len(d['wide_code'])} code blocks need sideways scrolling, e.g. {d['wide_code'][0].strip()[:100]!r}"]


UNWANTED_TEXT = {   # what a reader must not see on a page: a pattern for each
    "a machine path": r"/work/|/tmp/tmp|/home/|/root/|\.venv/|site-packages",
    "a Python warning": r"\b\w+Warning\b",
    "a `<factory>` default": r"<factory>",
    "an annotation show_doc made up": r":(?:NoneType=None|VAR_POSITIONAL|VAR_KEYWORD)\b",
}
SHOWN_ON_PURPOSE = {"core/showdoc.html": {"a `<factory>` default"}}   # the page that explains (and fixes) the defect


def check_page_text(d:dict, page:str="") -> list[str]:
    "The page's text (prose, code and outputs) shows none of UNWANTED_TEXT, but what SHOWN_ON_PURPOSE allows `page`."
    return [f"{len(hits)} times {what}, first: {' '.join(d['shown'][max(hits[0].start() - 50, 0):hits[0].end() + 50].split())!r}"
            for what, pat in UNWANTED_TEXT.items() if what not in SHOWN_ON_PURPOSE.get(page, ())
            for hits in [list(re.finditer(pat, d["shown"]))] if hits]


def check_signatures(d:dict) -> list[str]:
    "show_doc signatures show no raw markdown link, and a dataclass's (`-> None` class) every field with its comment."
    raw, bare = [], []
    for sig in d["signatures"]:
        m = re.match(r"\s*(?:async\s+)?def (\w+)\((.*)\n\)\s*(->.*)?:\s*$", sig, re.S)
        if not m: continue
        name, params, ret = m.groups()
        raw += [f"{name}: {l}" for l in re.findall(r"\[[^\]\n]*\]\([^)\s]+\)", params)]
        if name[0].isupper() and (ret or "").replace(" ", "") == "->None":
            fields = [f for line in params.split("\n") if "#" not in line for f in re.findall(r"(?:^|,)\s*(\w+):", line)]
            if fields: bare.append(f"{name} ({', '.join(fields[:3])}{', ...' if len(fields) > 3 else ''})")
    return ([f"{len(raw)} raw markdown links in show_doc signatures, e.g. {raw[0]}"] if raw else []) + \
           ([f"{len(bare)} dataclasses show fields without their comment: {'; '.join(bare)}"] if bare else [])


def check_colons(d:dict) -> list[str]:
    "Every paragraph ending in ':' stands before what it introduces (code, output, list, table, figure, a show_doc)."
    return [f"paragraph ends in ':' before nothing it introduces (a hidden cell?): {p[-100:]!r}" for p in d["colons"]]


def quads_overlap(p:list, q:list, gap:float=2.0) -> bool:
    "Whether two convex quadrilaterals (screen corners of rotated text boxes) come closer than `gap` px (separating axes)."
    for quad in (p, q):
        for (x0, y0), (x1, y1) in zip(quad, quad[1:] + quad[:1]):
            n = (y0 - y1, x1 - x0); length = math.hypot(*n) or 1.0
            a, b = ([(x*n[0] + y*n[1]) / length for x, y in r] for r in (p, q))
            if min(a) >= max(b) + gap or min(b) >= max(a) + gap: return False
    return True


def check_figure_labels(d:dict) -> list[str]:
    "In each plotly figure no two text labels overlap or touch, no tick label is cut (ends in '='), none leaves the figure."
    problems = []
    for i, fig in enumerate(d["figure_labels"], 1):
        labels, (left, top, right, bottom) = fig["labels"], fig["box"]
        pairs = [f"{a['text']!r} / {b['text']!r}" for j, a in enumerate(labels) for b in labels[j + 1:]
                 if quads_overlap(a["corners"], b["corners"])]
        cut = [l["text"] for l in labels if l["tick"] and l["text"].endswith("=")]
        inside = lambda x, y: left - 1 <= x <= right + 1 and top - 1 <= y <= bottom + 1
        out = [l["text"] for l in labels if not all(inside(x, y) for x, y in l["corners"])]
        if pairs: problems.append(f"figure {i}: {len(pairs)} pairs of labels overlap, e.g. {'; '.join(pairs[:3])}")
        if cut: problems.append(f"figure {i}: tick labels cut: {cut[:3]}")
        if out: problems.append(f"figure {i}: labels outside the figure: {out[:3]}")
    return problems


def check_repo_link(d:dict, git_url:str) -> list[str]:
    "The top bar links to the repository (settings.ini `git_url`)."
    ok = any(h.rstrip("/").removesuffix(".git") == git_url.rstrip("/").removesuffix(".git") for h in d["navbar"])
    return [] if ok or not git_url else [f"no link to the repository {git_url} in the top bar"]


def check_results(results:Path) -> list[str]:
    "No results/**/*.json of the repository holds an absolute path (a string starting with '/' or naming /work/, /tmp/, /home/)."
    def paths(v, key=""):
        if isinstance(v, dict): return [p for k, x in v.items() for p in paths(x, f"{key}.{k}" if key else k)]
        if isinstance(v, list): return [p for i, x in enumerate(v) for p in paths(x, f"{key}[{i}]")]
        return [(key, v)] if isinstance(v, str) and (v.startswith("/") or re.search(r"/(work|tmp|home)/", v)) else []
    return [f"{f.relative_to(ROOT)}: {len(hits)} absolute paths, first at {hits[0][0]}: {hits[0][1][:80]!r}"
            for f in sorted(results.rglob("*.json")) for hits in [paths(json.loads(f.read_text()))] if hits]


def check_api_anchors(site:Path) -> list[str]:
    "Every public module-level symbol in lengen/_modidx.py has its show_doc anchor on its page."
    ns = {}; exec((ROOT/"lengen"/"_modidx.py").read_text(), ns)
    problems, ids = [], {}
    for mod, syms in ns["d"]["syms"].items():
        for name, (link, _) in syms.items():
            short = name[len(mod) + 1:]
            if "." in short or short.startswith("_"): continue
            page, anchor = link.split("#")
            path = site/page
            if not path.is_file(): problems.append(f"{page}: no page for {name}"); continue
            if path not in ids: ids[path] = ids_of(path)
            if anchor not in ids[path]: problems.append(f"{page}: no documentation (show_doc anchor #{anchor}) for {name}")
    return problems


def check_console_scripts(site:Path, declared:str) -> list[str]:
    "cli.html has a section with `--help` text for every console script that settings.ini declares."
    page = site/"cli.html"
    if not page.is_file(): return ["cli.html: missing (the console scripts page, nbs/cli.ipynb)"]
    html, problems = page.read_text(), []
    for name in [d.split("=")[0] for d in declared.split()]:
        sec = re.search(rf'<section id="{re.escape(name)}".*?</section>', html, re.S)
        if not sec: problems.append(f"cli.html: no section for console script {name}")
        elif "Not available in this build" in sec.group(0):
            why = re.sub(r"<[^>]+>", "", sec.group(0).split("Not available in this build")[1])[:200].strip()
            problems.append(f"cli.html: console script {name} has no help {why}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", default=str(ROOT/"_docs"), help="the built site (nbdev_docs writes _docs/)")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium", help="the browser to drive")
    ap.add_argument("--screenshots", default=None, help="save a PNG of each page here")
    a = ap.parse_args()
    shots = Path(a.screenshots) if a.screenshots else None
    if shots: shots.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    problems = check_site(Path(a.site), a.chromium, shots)
    for p in problems: print(f"PROBLEM {p}")
    print(f"check_site: {'OK' if not problems else f'{len(problems)} problems'} ({time.time() - t0:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__": sys.exit(main())
