"""report.html in a real browser: headless Chromium opens the page from disk with the
network cut, and the test reads what the page's JavaScript drew.

Chromium is driven over its DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
ended by NUL on file descriptors 3 and 4), so no Python package is needed. Skipped, with the
reason, where no Chromium is installed (Debian: `apt-get install chromium`). The screenshots are
kept under build/report-html-test/.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any, Optional

import pytest

from conftest import ROOT, fixture_path
from test_report_html import committed_cpu_run

from abreport import compare, html_report
from abreport.data import Dataset
from abreport.load import load_run

RUN_JSON = committed_cpu_run()  # today results/amd-epyc/quick-bd1d079.json
COMMITTED_PAGE = os.path.join(RUN_JSON[:-5], "report.html")
SHOTS = os.path.join(ROOT, "build", "report-html-test")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> Optional[str]:
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


pytestmark = pytest.mark.skipif(_browser() is None, reason="no Chromium on PATH (Debian package chromium; "
                                                           "scripts/setup.sh installs it for CI)")


class Browser:
    """One headless Chromium, one tab, driven over the DevTools pipe."""

    def __init__(self, exe: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="abchrome-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()

        def fds() -> None:  # the child's fd 3 reads our commands, fd 4 carries its replies
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-dev-shm-usage", "--proxy-server=127.0.0.1:9", "--hide-scrollbars",
             "about:blank"],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=None)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=None)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        # no network at all: offline, besides the proxy that leads nowhere
        self.call("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1,
                                                       "uploadThroughput": -1})
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1,
                                                         "mobile": False})

    def call(self, method: str, params: Optional[dict] = None, session: Any = "tab", timeout: float = 30) -> dict:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session == "tab":
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        want = self._id
        deadline = time.monotonic() + timeout
        while True:
            m = self._next(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def _next(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def eval(self, expr: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, path: str, ready: str = "document.documentElement.dataset.ready === '1'") -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)})
        deadline = time.monotonic() + 30
        while not self.eval(f"document.readyState === 'complete' && ({ready})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path}: the page never got ready; errors: {self.errors()}")
            time.sleep(0.05)

    def errors(self) -> list[str]:
        """JavaScript exceptions, console errors and log errors since the last open()."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif m["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append("log: " + p["entry"]["text"])
        return out

    def requests(self) -> list[str]:
        """URLs the page asked for over the network (anything but file: and data:)."""
        return [m["params"]["request"]["url"] for m in self.events if m["method"] == "Network.requestWillBeSent"
                and not m["params"]["request"]["url"].startswith(("file:", "data:"))]

    def hover(self, selector: str) -> None:
        """Moves the mouse onto the centre of the first element matching selector."""
        box = self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})

    def click(self, selector: str) -> None:
        self.eval(f"document.querySelector({json.dumps(selector)}).click()")

    def screenshot(self, path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close", session=None, timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    b = Browser(_browser())  # type: ignore[arg-type]
    yield b
    b.close()


def _counts(b: Browser) -> dict[str, int]:
    """Marks drawn per chart (every .pt element under an svg with data-chart)."""
    return b.eval("""(() => { const n = {}; document.querySelectorAll('svg[data-chart] .pt').forEach(p => {
        const c = p.closest('svg[data-chart]').dataset.chart; n[c] = (n[c] || 0) + 1; }); return n; })()""")


def _expected_comparison(bench: list[dict], rows: list[dict]) -> int:
    """Approximations on the comparison scatter: per problem holding a comparison-tagged row or an
    entry with a distance to exact attention, each variant's fastest entry that has a distance > 0,
    when the problem has an exact softmax row (its speed vs exact is defined)."""
    softmax = {r["name"] for r in rows if r.get("math") == "softmax"}
    tagged = {r["name"] for r in rows if "comparison" in r.get("tags", [])}
    key = lambda e: (e.get("peer_device") or e["backend"], e["dtype"], e["B"], e["H"], e["Hkv"], e["Nq"], e["Nkv"],  # noqa: E731
                     e["d"], e["mask"], e.get("pass", "fwd"))
    problems: dict[tuple, dict[str, dict]] = {}
    for e in bench:
        if e.get("time_ms"):
            best = problems.setdefault(key(e), {})
            if e["variant"] not in best or e["time_ms"] < best[e["variant"]]["time_ms"]:
                best[e["variant"]] = e
    n = 0
    for best in problems.values():
        dist = {v: e.get("approx_err_vs_exact") for v, e in best.items()}
        if not any(v in tagged or d is not None for v, d in dist.items()):
            continue
        if any(v in softmax and dist[v] is None and not best[v].get("peer") for v in best) or \
                any(best[v].get("peer") and dist[v] is None and not str(best[v].get("bytes_model")).startswith("attnbench:")
                    for v in best):
            n += sum(1 for d in dist.values() if d is not None and d > 0)
    return n


def _expected_counts(run_json: str) -> dict[str, int]:
    """From the results file itself, not from the page: roofline = every entry that ran (rate and
    intensity > 0) of the dtype; TFLOP/s vs N = one point per (variant, problem) with Nq = Nkv
    (the seq group when there is one)."""
    with open(run_json, encoding="utf-8") as f:
        doc = json.load(f)
    bench = [e for e in doc["benchmarks"] if e["status"] == "ok"]
    out: dict[str, int] = {}
    n_comparison = _expected_comparison(bench, doc["context"].get("variants", []))
    if n_comparison:
        out["comparison"] = n_comparison
    for e in bench:
        if e["tflops"] > 0 and e["intensity"] > 0:
            out[f"roofline_{e['dtype']}"] = out.get(f"roofline_{e['dtype']}", 0) + 1
    for dt in {e["dtype"] for e in bench}:
        sq = [e for e in bench if e["dtype"] == dt and e["Nq"] == e["Nkv"]]
        sq = [e for e in sq if e["group"] == "seq"] or sq
        probs = {(e["variant"], e.get("peer_device") or e["backend"], e["B"], e["H"], e["Hkv"], e["Nq"], e["d"],
                  e["mask"]) for e in sq}
        if probs:
            out[f"tflops_seq_{dt}"] = len(probs)
    return out


def _check_page(b: Browser, page: str, run_json: str, shot: str) -> None:
    b.open(page)
    assert b.errors() == []
    assert b.requests() == []
    counts = _counts(b)
    expected = _expected_counts(run_json)
    assert {k: v for k, v in counts.items() if not k.startswith("speedup_")} == expected
    assert counts.get("speedup_fp32", 0) > 0
    # hover a roofline point (the first that no other point covers): the card names its configuration
    i = b.eval("""(() => { document.querySelector('svg[data-chart=roofline_fp32]').scrollIntoView({block: 'center'});
        for (const p of document.querySelectorAll('svg[data-chart=roofline_fp32] .pt')) {
          const r = p.getBoundingClientRect();
          if (document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === p) return p.dataset.i; }
        })()""")
    assert i is not None
    name = b.eval(f"JSON.parse(document.getElementById('abdata').textContent).entries[{i}].name")
    assert name.startswith(b.eval(f"JSON.parse(document.getElementById('abdata').textContent).entries[{i}].variant"))
    b.hover(f"svg[data-chart=roofline_fp32] .pt[data-i='{i}']")
    assert b.eval("getComputedStyle(document.getElementById('tip')).display") == "block"
    card = b.eval("document.getElementById('tip').textContent")
    label = b.eval(f"JSON.parse(document.getElementById('abdata').textContent).entries[{i}].label")
    assert name in card and "binding roof" in card and "time_ms" in card and label in card  # every field
    b.screenshot(shot)
    # negative control: off the point, the card goes away
    b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 3, "y": 3})
    assert b.eval("getComputedStyle(document.getElementById('tip')).display") == "none"
    assert b.errors() == []


def test_committed_page_renders_offline_and_names_the_hovered_point(browser):
    assert os.path.isfile(COMMITTED_PAGE)
    _check_page(browser, COMMITTED_PAGE, RUN_JSON, os.path.join(SHOTS, "committed_report.png"))


def test_fresh_page_filters_and_legend(browser, tmp_path):
    page = html_report.write_report(Dataset(runs=[load_run(RUN_JSON)]), str(tmp_path))
    _check_page(browser, page, RUN_JSON, os.path.join(SHOTS, "report.png"))
    before = _counts(browser)
    n_flash2 = browser.eval("document.querySelectorAll('svg[data-chart=roofline_fp32] .pt').length - "
                            "[...document.querySelectorAll('svg[data-chart=roofline_fp32] .pt')].filter(p => "
                            "JSON.parse(document.getElementById('abdata').textContent).entries[p.dataset.i]"
                            ".variant !== 'flash2').length")
    assert n_flash2 > 0
    # a legend click hides the variant everywhere; a second click brings it back
    browser.click("[data-section=roofline_fp32] .legend [data-variant=flash2]")
    assert _counts(browser)["roofline_fp32"] == before["roofline_fp32"] - n_flash2
    assert browser.eval("document.querySelector('#filters [data-facet=variant] [data-value=flash2]')"
                        ".classList.contains('off')")
    browser.click("[data-section=roofline_fp32] .legend [data-variant=flash2]")
    assert _counts(browser) == before
    # the dtype filter hides the bf16 charts; the pass filter has a chip per pass of the run, and
    # switching every pass off leaves no point
    browser.click("#filters [data-facet=dtype] [data-value=bf16]")
    assert browser.eval("document.querySelector('[data-section=roofline_bf16]').hidden")
    assert not browser.eval("document.querySelector('[data-section=roofline_fp32]').hidden")
    passes = browser.eval("[...document.querySelectorAll('#filters [data-facet=pass] .chip')].map(c => c.dataset.value)")
    assert "fwd" in passes and passes == sorted(passes)
    for v in passes:
        browser.click(f"#filters [data-facet=pass] [data-value={v}]")
    assert sum(_counts(browser).values()) == 0
    assert browser.errors() == []


def test_compare_page_marks_the_regressions(browser, tmp_path):
    a, b = load_run(fixture_path("cpu_small.json")), load_run(fixture_path("cpu_small_slower.json"))
    result = compare.compare(a, b)
    page = html_report.write_compare(result, a, b, str(tmp_path / "compare.html"))
    browser.open(page)
    assert browser.errors() == [] and browser.requests() == []
    n_ratio = sum(1 for r in result.rows if r.ratio is not None)
    assert _counts(browser) == {"compare": n_ratio}
    regs = browser.eval("[...document.querySelectorAll('tr.regression td.mono')].map(t => t.textContent)")
    assert sorted(regs) == sorted(r.name for r in result.regressions) and regs
    browser.hover("tr.regression")
    card = browser.eval("document.getElementById('tip').textContent")
    assert regs[0] in card and "slower" in card
    browser.screenshot(os.path.join(SHOTS, "compare.png"))


def test_the_checks_catch_a_broken_page(browser, tmp_path):
    """Negative controls: a script error and a network request are both seen."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><img src='http://198.51.100.7/x.png'>"
                   "<script>document.documentElement.dataset.ready = '1'; undefinedFunction();</script>"
                   "</body></html>")
    browser.open(str(bad))
    assert any("undefinedFunction" in e for e in browser.errors())
    assert browser.requests() == ["http://198.51.100.7/x.png"]
