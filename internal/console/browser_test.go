package console_test

// Tests in a real browser: headless Chromium (Debian's chromium package;
// compat_test/install.sh installs it) driven with chromedp. Each page is
// loaded against a seeded broker and what it shows is checked against the
// broker's state. On failure a screenshot goes to the test's artifact dir
// (kept with go test -artifacts -outputdir DIR).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// chromium finds the browser: $MINIKAFKA_CHROMIUM, else chromium on PATH.
func chromium(tb testing.TB) string {
	if p := os.Getenv("MINIKAFKA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Skip("no Chromium (apt-get install chromium, or set MINIKAFKA_CHROMIUM)")
	return ""
}

// browser is one headless Chromium with one tab.
type browser struct {
	tb   testing.TB
	ctx  context.Context
	base string
	navs atomic.Int64
}

// newBrowser starts Chromium for tb with a fresh profile. The flags keep
// it from reaching for the network (this machine has none beyond package
// registries, and Chromium stalls on refused connections otherwise).
func newBrowser(tb testing.TB, base string) *browser {
	tb.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(tb)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	tb.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first run launches the browser and binds it to its context, so
	// that context has no timeout.
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("starting Chromium: %v", err)
	}
	return &browser{tb: tb, ctx: ctx, base: base}
}

// run runs actions with a timeout, failing the test (with a screenshot)
// if they fail.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.tb.Fatalf("%s: %v", what, err)
	}
}

// get runs one action that returns a value.
func get[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.tb.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshotOnFailure registers a cleanup that saves the page when t
// failed.
func (b *browser) screenshotOnFailure(t *testing.T) {
	dir := t.ArtifactDir()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Logf("screenshot: %v", err)
			return
		}
		name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".png")
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Logf("screenshot: %v", err)
			return
		}
		t.Logf("screenshot of the page: %s", name)
	})
}

// start points b at subtest t (its failures, its screenshot) and opens
// the page.
func (b *browser) start(t *testing.T, fragment string) {
	b.tb = t
	b.screenshotOnFailure(t)
	b.open(fragment)
}

// open loads a page (#/fragment) as a new document and waits until it
// has drawn.
func (b *browser) open(fragment string) {
	b.tb.Helper()
	page := strings.SplitN(strings.TrimPrefix(fragment, "/"), "/", 2)[0]
	page = strings.SplitN(page, "?", 2)[0]
	url := fmt.Sprintf("%s/?n=%d#%s", b.base, b.navs.Add(1), fragment)
	b.run("open "+fragment, chromedp.Navigate(url),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.getElementById("main").dataset.ready === %q`, page), chromedp.WithPollingTimeout(15*time.Second)))
}

// waitJS waits until the JS expression is true.
func (b *browser) waitJS(what, expr string) {
	b.tb.Helper()
	b.run(what, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second)))
}

// waitText waits until the element sel's text contains want.
func (b *browser) waitText(sel, want string) {
	b.tb.Helper()
	b.waitJS(fmt.Sprintf("%s shows %q", sel, want), fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want))
}

func (b *browser) text(sel string) string {
	b.tb.Helper()
	return get(b, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

func (b *browser) count(sel string) int {
	b.tb.Helper()
	return get(b, "count "+sel, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

// set puts v in an input or select and fires change, as a user would.
func (b *browser) set(sel, v string) {
	b.tb.Helper()
	b.run("set "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("input")); e.dispatchEvent(new Event("change")); })()`, sel, v)))
}

func (b *browser) click(sel string) {
	b.tb.Helper()
	b.run("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// firstOffset is the offset of the first row of the record table.
func (b *browser) firstOffset() int64 {
	b.tb.Helper()
	s := get(b, "first row", chromedp.Evaluate[string](`(() => { const r = document.querySelector("#record-table tbody tr"); return r ? r.dataset.offset : "-1"; })()`))
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// timePage clicks Go with the start given and returns the milliseconds
// until the page's 50 rows are in the DOM and painted, as measured in the
// browser.
func (b *browser) timePage(start string) float64 {
	b.tb.Helper()
	b.set("#start", "offset")
	b.set("#start-value", start)
	js := `new Promise((resolve) => {
  const old = document.querySelector("#record-table tbody tr");
  const t0 = performance.now();
  document.getElementById("go").click();
  const check = () => {
    const rows = document.querySelectorAll("#record-table tbody tr");
    if (rows.length === 50 && rows[0] !== old && rows[0].dataset.offset === ` + strconv.Quote(start) + `) {
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0)));
    } else setTimeout(check, 1);
  };
  check();
})`
	return get(b, "time a page", chromedp.Evaluate[float64](js, chromedp.EvalAwaitPromise))
}

func TestBrowser(t *testing.T) {
	chromium(t)
	s := seed(t)
	br := newBrowser(t, s.base)
	ctx := context.Background()

	t.Run("overview", func(t *testing.T) {
		br.start(t, "/overview")
		if got := br.text("#topic-count"); got != "3" {
			t.Errorf("topics card %q, want 3", got)
		}
		if got := br.text("#node-id"); got != "0" {
			t.Errorf("node card %q", got)
		}
		if got := br.text("#listener-table"); !strings.Contains(got, s.b.ListenAddr().String()) {
			t.Errorf("listeners %q, want %s", got, s.b.ListenAddr())
		}
		if br.count("canvas#rates") != 1 || br.count("canvas#reqrates") != 1 {
			t.Error("no rate charts")
		}
		// A second poll gives the charts a rate to draw.
		br.waitJS("chart drawn", `(() => { const c = document.getElementById("rates"); const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; for (let i = 0; i < d.length; i += 4) if (d[i+2] > 200 && d[i] < 100) return true; return false; })()`)
	})

	t.Run("topics", func(t *testing.T) {
		br.start(t, "/topics")
		if n := br.count("#topics tbody tr"); n != 4 {
			t.Errorf("%d topic rows, want 4 (3 seeded and __consumer_offsets)", n)
		}
		if got := br.text(`#topics tr[data-topic="events"]`); !strings.Contains(got, "230") {
			t.Errorf("events row %q, want 230 records", got)
		}
		br.set("#new-topic", "fromui")
		br.set("#new-partitions", "2")
		br.click(`#create-topic button[type="submit"]`)
		br.waitJS("fromui listed", `!!document.querySelector('#topics tr[data-topic="fromui"]')`)
		td, err := s.adm.ListTopics(ctx, "fromui")
		if err != nil || len(td["fromui"].Partitions) != 2 {
			t.Errorf("fromui on the broker: %v %v", td, err)
		}
		br.click(`button[data-delete="fromui"]`)
		br.waitText(`button[data-delete="fromui"]`, "Really")
		br.click(`button[data-delete="fromui"]`)
		br.waitJS("fromui gone", `!!document.querySelector('#topics tr[data-topic="events"]') && !document.querySelector('#topics tr[data-topic="fromui"]')`)
		if td, err := s.adm.ListTopics(ctx); err != nil || td.Has("fromui") {
			t.Errorf("fromui still on the broker: %v", err)
		}
	})

	t.Run("internal topic", func(t *testing.T) {
		br.start(t, "/topics")
		sel := `button[data-delete="__consumer_offsets"]`
		if !get(br, "disabled", chromedp.Evaluate[bool](`document.querySelector('`+sel+`').disabled`)) {
			t.Error("the Delete button of __consumer_offsets is enabled")
		}
		if title := get(br, "title", chromedp.Evaluate[string](`document.querySelector('`+sel+`').title`)); !strings.Contains(title, "refuses") {
			t.Errorf("disabled Delete button says %q, want the reason", title)
		}
		if get(br, "events enabled", chromedp.Evaluate[bool](`document.querySelector('button[data-delete="events"]').disabled`)) {
			t.Error("the Delete button of events is disabled")
		}
		// Sent anyway (the button enabled by hand): the broker refuses and
		// the page shows its reason.
		br.run("enable", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+sel+`').disabled = false`))
		br.click(sel)
		br.waitText(sel, "Really")
		br.click(sel)
		br.waitText("#toast", "internal topic __consumer_offsets cannot be deleted")
		if !strings.Contains(br.text("#toast"), "INVALID_REQUEST") {
			t.Errorf("toast %q, want the broker's error", br.text("#toast"))
		}
		if td, err := s.adm.ListTopicsWithInternal(ctx, "__consumer_offsets"); err != nil || !td.Has("__consumer_offsets") {
			t.Errorf("__consumer_offsets gone: %v", err)
		}
	})

	t.Run("topic", func(t *testing.T) {
		br.start(t, "/topics/orders")
		if n := br.count("#partitions tbody tr"); n != 3 {
			t.Errorf("%d partition rows, want 3", n)
		}
		if got := br.text("#partitions tbody tr:nth-child(2)"); !strings.Contains(got, "6") { // 5 records and the commit marker
			t.Errorf("orders/1 row %q, want end offset 6", got)
		}
		br.set("#config-name", "retention.ms")
		br.set("#config-value", "3600000")
		br.run("set config", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("button")].find((b) => b.textContent === "Set").click()`))
		br.waitJS("config shown", `(() => { const e = document.querySelector('#configs input[data-config="retention.ms"]'); return !!e && e.value === "3600000"; })()`)
		rc, err := s.adm.DescribeTopicConfigs(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		c, err := rc.On("orders", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, cf := range c.Configs {
			if cf.Key == "retention.ms" && cf.MaybeValue() != "3600000" {
				t.Errorf("retention.ms on the broker: %s", cf.MaybeValue())
			}
		}
	})

	t.Run("browse", func(t *testing.T) {
		br.start(t, "/browse/events?partition=0")
		br.waitText("#count", "50 records")
		if off := br.firstOffset(); off != 0 {
			t.Errorf("first page starts at %d", off)
		}
		for _, want := range []int64{50, 100, 150, 200} {
			br.click("#next")
			br.waitJS(fmt.Sprintf("page at %d", want), fmt.Sprintf(`document.querySelector("#record-table tbody tr").dataset.offset === "%d"`, want))
		}
		br.waitText("#count", "30 records")
		if n := br.count("#record-table tbody tr"); n != eventsRecords-200 {
			t.Errorf("last page: %d rows", n)
		}
		if !get(br, "next disabled", chromedp.Evaluate[bool](`document.getElementById("next").disabled`)) {
			t.Error("Next enabled on the last page")
		}
		br.click("#prev")
		br.waitJS("back to 150", `document.querySelector("#record-table tbody tr").dataset.offset === "150"`)
		if got := br.text(`#record-table tr[data-offset="151"] td.key`); got != "k-151" {
			t.Errorf("key of 151: %q", got)
		}

		// Filter: every tenth record matches.
		br.set("#filter", everyTenthMatch)
		br.click("#go")
		br.waitText("#count", fmt.Sprintf("%d records", eventsRecords/10))
		if got := br.text(`#record-table tr[data-offset="10"] td.value`); got != `{"n":10,"kind":"tenth"}` {
			t.Errorf("filtered value as text: %q", got)
		}
		br.set("#format", "hex")
		br.waitText(`#record-table tr[data-offset="10"] td.value`, "7b 22 6e 22 3a 31 30")
		br.set("#format", "json")
		br.waitText(`#record-table tr[data-offset="10"] td.value`, "\"kind\": \"tenth\"")
		if got := br.text(`#record-table tr[data-offset="10"] td.value pre`); got != "{\n  \"n\": 10,\n  \"kind\": \"tenth\"\n}" {
			t.Errorf("pretty JSON: %q", got)
		}
		// Paging with the filter on goes back through the page history.
		br.set("#filter", "k-")
		br.set("#format", "text")
		br.click("#go")
		br.waitText("#count", "50 records")
		br.click("#next")
		br.waitJS("filtered page 2", `document.querySelector("#record-table tbody tr").dataset.offset === "50"`)
		br.click("#prev")
		br.waitJS("filtered page 1", `document.querySelector("#record-table tbody tr").dataset.offset === "0"`)

		// Start from the latest records, then from a time.
		br.set("#filter", "")
		br.set("#start", "latest")
		br.click("#go")
		br.waitJS("latest page", fmt.Sprintf(`document.querySelector("#record-table tbody tr").dataset.offset === "%d"`, eventsRecords-50))

		ms := br.timePage("120")
		t.Logf("a page of 50 records rendered in %.1f ms", ms)

		// Produce from the form.
		br.set("#produce-partition", "0")
		br.set("#produce-key", "ui-key")
		br.set("#produce-value", `{"from":"ui"}`)
		br.set("#produce-headers", "a=1")
		br.click(`#produce button[type="submit"]`)
		br.waitText("#produce-result", fmt.Sprintf("partition 0 offset %d", eventsRecords))
		ends, err := s.adm.ListEndOffsets(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		if o, _ := ends.Lookup("events", 0); o.Offset != eventsRecords+1 {
			t.Errorf("events end offset %d after producing from the form", o.Offset)
		}
		br.set("#start", "latest")
		br.click("#go")
		br.waitText(fmt.Sprintf(`#record-table tr[data-offset="%d"]`, eventsRecords), "ui-key")
		if got := br.text(fmt.Sprintf(`#record-table tr[data-offset="%d"] td:last-child`, eventsRecords)); strings.Join(strings.Fields(got), " ") != "a: 1" {
			t.Errorf("produced row %q, want header a: 1", got)
		}
	})

	t.Run("groups", func(t *testing.T) {
		br.start(t, "/groups")
		if n := br.count("#groups tbody tr"); n != 1 {
			t.Errorf("%d group rows", n)
		}
		br.open("/groups/" + seededGroup)
		if got := br.text("#group-state"); got != "Empty" {
			t.Errorf("state %q", got)
		}
		end := int64(eventsRecords + 1) // the record the browse test produced
		if got := br.text("#total-lag"); got != strconv.FormatInt(end-billingCommit, 10) {
			t.Errorf("total lag %q, want %d", got, end-billingCommit)
		}
		if got := br.text(`#lag tr[data-partition="events/0"]`); !strings.Contains(got, "100") {
			t.Errorf("lag row %q", got)
		}
		if br.count("canvas#lag-chart") != 1 {
			t.Error("no lag chart")
		}
		br.set("#reset-to", "end")
		br.click("#reset")
		br.waitText("#total-lag", "0")
		br.waitJS("page redrawn", `document.getElementById("main").dataset.ready === "groups"`)
		offs, err := s.adm.FetchOffsets(ctx, seededGroup)
		if err != nil {
			t.Fatal(err)
		}
		if o, _ := offs.Lookup("events", 0); o.At != end {
			t.Errorf("commit after reset to end: %d, want %d", o.At, end)
		}
		br.set("#reset-to", "start")
		br.click("#reset")
		br.waitText("#total-lag", strconv.FormatInt(end, 10))
		offs, _ = s.adm.FetchOffsets(ctx, seededGroup)
		if o, _ := offs.Lookup("events", 0); o.At != 0 {
			t.Errorf("commit after reset to start: %d", o.At)
		}
	})

	t.Run("groups list", func(t *testing.T) {
		// A live member of a classic group that has committed nothing: its
		// lag is everything from the log start, as inspect lag counts it.
		live := minikafkatest.Client(t, s.b, kgo.ConsumerGroup("live"), kgo.ConsumeTopics("orders"), kgo.DisableAutoCommit())
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for {
			pctx, pcancel := context.WithTimeout(wctx, 100*time.Millisecond)
			live.PollFetches(pctx)
			pcancel()
			dg, err := s.adm.DescribeGroups(wctx, "live")
			if err == nil && dg["live"].State == "Stable" && len(dg["live"].Members) == 1 {
				break
			}
			if wctx.Err() != nil {
				t.Fatalf("group live never became stable: %v %+v", err, dg)
			}
		}
		br.start(t, "/groups")
		if n := br.count("#groups tbody tr"); n != 2 {
			t.Errorf("%d group rows, want 2", n)
		}
		row := func(g, cell string) string { return br.text(fmt.Sprintf(`#groups tr[data-group=%q] td.%s`, g, cell)) }
		if got := row("live", "members"); got != "1" {
			t.Errorf("live members %q, want 1", got)
		}
		if got := row("live", "lag"); got != strconv.Itoa(txnRecords+1) { // orders/1: the records and the commit marker
			t.Errorf("live total lag %q, want %d", got, txnRecords+1)
		}
		if got := row(seededGroup, "members"); got != "0" {
			t.Errorf("%s members %q, want 0", seededGroup, got)
		}
		// The groups test reset billing to the start of events.
		if got := row(seededGroup, "lag"); got != strconv.Itoa(eventsRecords+1) {
			t.Errorf("%s total lag %q, want %d", seededGroup, got, eventsRecords+1)
		}
		br.open("/groups/live")
		if got := br.text("#total-lag"); got != strconv.Itoa(txnRecords+1) {
			t.Errorf("live group page total lag %q, want %d", got, txnRecords+1)
		}
		if got := br.text("#member-count"); got != "1" {
			t.Errorf("live group page members %q", got)
		}
	})

	t.Run("transactions", func(t *testing.T) {
		br.start(t, "/transactions")
		if got := br.text(`#txns tr[data-txn="` + seededTxnID + `"]`); !strings.Contains(got, "CompleteCommit") {
			t.Errorf("transaction row %q", got)
		}
		listed, err := s.adm.ListTransactions(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := br.count("#txns tbody tr"); n != len(listed) {
			t.Errorf("%d transaction rows, the broker lists %d", n, len(listed))
		}
	})

	t.Run("scram", func(t *testing.T) {
		br.start(t, "/scram")
		br.waitText("#no-users", "No SCRAM users")
		creds := func(user string) map[string]int32 {
			t.Helper()
			ds, err := s.adm.DescribeUserSCRAMs(ctx, user)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int32{}
			for _, ci := range ds[user].CredInfos {
				out[ci.Mechanism.String()] = ci.Iterations
			}
			return out
		}
		// Create carol with the form's defaults.
		br.set("#scram-user", "carol")
		br.set("#scram-password", "carol-pw")
		br.click(`#scram-form button[type="submit"]`)
		br.waitText(`#scram tr[data-user="carol"]`, "SCRAM-SHA-256 (8192 iterations)")
		if got := creds("carol"); len(got) != 1 || got["SCRAM-SHA-256"] != 8192 {
			t.Errorf("carol on the broker: %v", got)
		}
		// Add a SHA-512 credential with other iterations.
		br.set("#scram-user", "carol")
		br.set("#scram-password", "carol-pw-512")
		br.set("#scram-mechanism", "SCRAM-SHA-512")
		br.set("#scram-iterations", "4096")
		br.click(`#scram-form button[type="submit"]`)
		br.waitText(`#scram tr[data-user="carol"]`, "SCRAM-SHA-512 (4096 iterations)")
		if got := creds("carol"); len(got) != 2 || got["SCRAM-SHA-512"] != 4096 {
			t.Errorf("carol on the broker: %v", got)
		}
		// "Set password" fills the form with the user and mechanism.
		br.click(`#scram tr[data-user="carol"] div[data-mechanism="SCRAM-SHA-512"] button.set-password`)
		if got := get(br, "form", chromedp.Evaluate[string](`["scram-user","scram-mechanism","scram-iterations","scram-password"].map((id) => document.getElementById(id).value).join("|")`)); got != "carol|SCRAM-SHA-512|4096|" {
			t.Errorf("form after Set password: %q", got)
		}
		// Remove one mechanism (asked twice), then the user.
		remove := `button[data-remove="carol SCRAM-SHA-256"]`
		br.click(remove)
		br.waitText(remove, "Really")
		br.click(remove)
		br.waitJS("SHA-256 removed", `(() => { const r = document.querySelector('#scram tr[data-user="carol"]'); return !!r && !r.textContent.includes("SCRAM-SHA-256"); })()`)
		if got := creds("carol"); len(got) != 1 || got["SCRAM-SHA-512"] != 4096 {
			t.Errorf("carol on the broker after removing SHA-256: %v", got)
		}
		del := `button[data-delete-user="carol"]`
		br.click(del)
		br.waitText(del, "Really")
		br.click(del)
		br.waitText("#no-users", "No SCRAM users")
		if ds, err := s.adm.DescribeUserSCRAMs(ctx); err != nil || len(ds) != 0 {
			t.Errorf("users on the broker after delete: %v %v", ds, err)
		}
		// A refused change shows the broker's reason (the form's own
		// checks are bypassed, as a script could).
		br.set("#scram-user", "dave")
		br.set("#scram-password", "pw")
		br.set("#scram-iterations", "100")
		br.run("submit", chromedp.Evaluate[chromedp.Void](`document.getElementById("scram-form").dispatchEvent(new Event("submit", {cancelable: true}))`))
		br.waitText("#toast.error", "iterations 100")
	})

	t.Run("forwarding", func(t *testing.T) {
		br.start(t, "/forwarding")
		br.waitText("#no-forwarding", "No forwarded topics")
		if n := br.count("#forward-groups"); n != 0 {
			t.Errorf("%d group offset tables without forwarding, want none", n)
		}
	})
}

// TestBrowserForwardingGroups: the forwarding page shows the group offset
// sync rows of a broker forwarding to a real upstream.
func TestBrowserForwardingGroups(t *testing.T) {
	chromium(t)
	s := seedForwarding(t)
	br := newBrowser(t, s.base)
	br.start(t, "/forwarding")
	if n := br.count("#forwarding tbody tr"); n != 1 {
		t.Errorf("%d forwarded partition rows, want 1", n)
	}
	if n := br.count("#forward-groups thead th"); n != 10 {
		t.Errorf("%d group table columns, want 10", n)
	}
	var cells []string
	for i := 1; i <= 8; i++ {
		cells = append(cells, br.text(fmt.Sprintf(`#forward-groups tr[data-group=%q] td:nth-child(%d)`, seededGroup, i)))
	}
	// group topic partition local upstream committed checkpoint lag
	if want := []string{seededGroup, "events", "0", "100", "100", "100", "100", "0"}; strings.Join(cells, "|") != strings.Join(want, "|") {
		t.Errorf("group row %q, want %q", cells, want)
	}
	if got := br.text(fmt.Sprintf(`#forward-groups tr[data-group=%q] td:nth-child(9)`, seededGroup)); !strings.HasPrefix(got, "20") {
		t.Errorf("synced %q, want a time", got)
	}
	if n := br.count("#forward-txn"); n != 0 {
		t.Errorf("%d transactional producer lines before any forwarded transaction, want none", n)
	}

	// A committed transaction on the forwarded topic: the page names the
	// upstream transactional producer that shipped it.
	txn := minikafkatest.Client(t, s.b, kgo.TransactionalID("console-forward-txn"), kgo.DefaultProduceTopic("events"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, kgo.StringRecord("in a transaction")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	for s.b.ForwardStats()[0].TransactionRounds != 1 {
		if ctx.Err() != nil {
			t.Fatalf("the transaction was never shipped: %+v", s.b.ForwardStats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	br.start(t, "/forwarding")
	want := "upstream transactional ID " + s.b.ForwardStats()[0].TransactionalID
	br.waitText("#forward-txn", want)
	if got := br.text("#forward-txn"); !strings.Contains(got, ": 1 upstream transactions since start") {
		t.Errorf("transactional producer line %q", got)
	}
}

// TestBrowserAllPartitions: the message browser opens on all partitions
// of a topic, newest first by timestamp with a partition column, pages
// back and forth through them, starts at a time, and still shows one
// partition when asked.
func TestBrowserAllPartitions(t *testing.T) {
	chromium(t)
	s := seed(t, minikafka.WithTopic("spread", 3))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Record i goes to partition i%3 at base+i seconds, so newest first
	// is i descending and each page takes from every partition.
	const n = 130
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "spread", Partition: int32(i % 3), Key: fmt.Appendf(nil, "s-%03d", i),
			Value: []byte("v"), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// keys lists i from hi down to lo as the page should show them.
	keys := func(hi, lo int) string {
		var ks []string
		for i := hi; i >= lo; i-- {
			ks = append(ks, fmt.Sprintf("s-%03d", i))
		}
		return strings.Join(ks, ",")
	}
	shown := func(br *browser) string {
		return get(br, "keys shown", chromedp.Evaluate[string](`[...document.querySelectorAll("#record-table tbody td.key")].map((e) => e.textContent).join(",")`))
	}
	br := newBrowser(t, s.base)
	br.start(t, "/browse/spread")
	br.waitText("#count", "50 records")
	if got := get(br, "partition", chromedp.Evaluate[string](`document.getElementById("partition").value`)); got != "all" {
		t.Errorf("partition select %q, want all", got)
	}
	if got := br.text("#record-table thead"); !strings.Contains(got, "Partition") {
		t.Errorf("header %q has no Partition column", got)
	}
	if got, want := shown(br), keys(129, 80); got != want {
		t.Errorf("first page\n got %s\nwant %s", got, want)
	}
	// s-129 is the 44th record of partition 0 (129 = 3*43).
	if got := br.text(`#record-table tbody tr:first-child`); !strings.HasPrefix(strings.Join(strings.Fields(got), " "), "0 43 ") {
		t.Errorf("first row %q, want partition 0 offset 43", got)
	}
	if !get(br, "prev disabled", chromedp.Evaluate[bool](`document.getElementById("prev").disabled`)) {
		t.Error("Previous enabled on the newest page")
	}
	br.click("#next")
	br.waitJS("page 2", `document.querySelector("#record-table td.key").textContent === "s-079"`)
	if got, want := shown(br), keys(79, 30); got != want {
		t.Errorf("second page\n got %s\nwant %s", got, want)
	}
	br.click("#next")
	br.waitText("#count", "30 records")
	if got, want := shown(br), keys(29, 0); got != want {
		t.Errorf("last page\n got %s\nwant %s", got, want)
	}
	if !get(br, "next disabled", chromedp.Evaluate[bool](`document.getElementById("next").disabled`)) {
		t.Error("Next enabled on the oldest page")
	}
	br.click("#prev")
	br.waitJS("back to page 2", `document.querySelector("#record-table td.key").textContent === "s-079"`)

	// From a time: the records at or before it, newest first.
	br.set("#start", "timestamp")
	br.set("#start-value", strconv.FormatInt(base.Add(60*time.Second).UnixMilli(), 10))
	br.click("#go")
	br.waitJS("from a time", `document.querySelector("#record-table td.key").textContent === "s-060"`)
	if got, want := shown(br), keys(60, 11); got != want {
		t.Errorf("page from a time\n got %s\nwant %s", got, want)
	}
	// With a filter across partitions: the keys holding "s-1" (s-100 to
	// s-129), newest first, and nothing older to page to.
	br.set("#filter", "s-1")
	br.set("#start", "latest")
	br.click("#go")
	br.waitText("#count", "30 records")
	var want []string
	for i := n - 1; i >= 0; i-- {
		if k := fmt.Sprintf("s-%03d", i); strings.Contains(k, "s-1") {
			want = append(want, k)
		}
	}
	if got := shown(br); got != strings.Join(want, ",") {
		t.Errorf("filtered\n got %s\nwant %s", got, strings.Join(want, ","))
	}
	if !get(br, "next disabled", chromedp.Evaluate[bool](`document.getElementById("next").disabled`)) {
		t.Error("Next enabled after a filter scanned every partition")
	}

	// One partition, as before: oldest first, no partition column.
	br.set("#filter", "")
	br.set("#partition", "1")
	br.set("#start", "start")
	br.click("#go")
	br.waitJS("partition 1", `document.querySelector("#record-table td.key").textContent === "s-001"`)
	if got := br.text("#record-table thead"); strings.Contains(got, "Partition") {
		t.Errorf("single-partition header %q has a Partition column", got)
	}
	if got := br.count("#record-table tbody tr"); got != 43 { // 1, 4, ..., 127
		t.Errorf("partition 1 shows %d records, want 43", got)
	}
}

// TestBrowserCluster: the cluster page shows what Metadata and
// DescribeConfigs (BROKER) tell a Kafka client, read only.
func TestBrowserCluster(t *testing.T) {
	chromium(t)
	s := seed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	md, err := s.adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcs, err := s.adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe broker configs: %v %v", rcs, err)
	}
	br := newBrowser(t, s.base)
	br.start(t, "/cluster")
	if got := br.text("#cluster-id"); got != md.Cluster || got == "" {
		t.Errorf("cluster ID %q, want %q", got, md.Cluster)
	}
	if got := br.text("#controller"); got != strconv.Itoa(int(md.Controller)) {
		t.Errorf("controller %q, want %d", got, md.Controller)
	}
	if n := br.count("#brokers tbody tr"); n != len(md.Brokers) {
		t.Errorf("%d broker rows, want %d", n, len(md.Brokers))
	}
	b0 := md.Brokers[0]
	row := strings.Join(strings.Fields(br.text(`#brokers tr[data-node="0"]`)), " ")
	if want := fmt.Sprintf("0 %s %d", b0.Host, b0.Port); !strings.HasPrefix(row, want) || !strings.Contains(row, "controller") {
		t.Errorf("broker row %q, want %q and controller", row, want)
	}
	if got := br.text("#cluster-listeners"); !strings.Contains(got, s.b.ListenAddr().String()) || !strings.Contains(got, "PLAINTEXT") {
		t.Errorf("listeners %q, want %s", got, s.b.ListenAddr())
	}
	if n := br.count("#broker-configs tbody tr"); n != len(rcs[0].Configs) || n < 10 {
		t.Errorf("%d config rows, the broker describes %d", n, len(rcs[0].Configs))
	}
	// Each row: the value and source DescribeConfigs gives.
	for _, cf := range rcs[0].Configs {
		if cf.Sensitive {
			continue
		}
		sel := fmt.Sprintf(`#broker-configs tr[data-config=%q]`, cf.Key)
		if got := br.text(sel + " td.value"); got != cf.MaybeValue() {
			t.Errorf("%s value %q, want %q", cf.Key, got, cf.MaybeValue())
		}
		if got, want := br.text(sel+" td.source"), strings.ToLower(strings.TrimSuffix(cf.Source.String(), "_CONFIG")); got != want {
			t.Errorf("%s source %q, want %q", cf.Key, got, want)
		}
	}
	if got := br.text(`#broker-configs tr[data-config="group.initial.rebalance.delay.ms"]`); !strings.Contains(got, "static_broker") {
		t.Errorf("a config the broker was started with shows %q, want source static_broker", got)
	}
	if n := br.count("#broker-configs input, #broker-configs button, #brokers button"); n != 0 {
		t.Errorf("%d controls on a read-only page", n)
	}
	br.set("#config-filter", "group.")
	visible := get(br, "visible rows", chromedp.Evaluate[int](`[...document.querySelectorAll("#broker-configs tbody tr")].filter((r) => !r.hidden).length`))
	want := 0
	for _, cf := range rcs[0].Configs {
		if strings.Contains(cf.Key, "group.") {
			want++
		}
	}
	if visible != want || want == 0 {
		t.Errorf("filter group.: %d rows shown, want %d", visible, want)
	}
}

// TestBrowserACLsQuotas: the ACL and quota pages list what DescribeAcls
// and DescribeClientQuotas answer; without an authorizer the ACL page
// says so.
func TestBrowserACLsQuotas(t *testing.T) {
	chromium(t)
	// No ACL names the cluster, so the anonymous test client may manage
	// ACLs and quotas.
	s := seed(t, minikafka.WithAuthorizer(minikafka.AuthorizerConfig{AllowEveryoneIfNoACLFound: true}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Topics("orders").Allow("User:alice").AllowHosts("*").Operations(kadm.OpRead, kadm.OpDescribe),
		kadm.NewACLs().Groups("app-").ResourcePatternType(kadm.ACLPatternPrefixed).Deny("User:bob").DenyHosts("10.0.0.1").Operations(kadm.OpRead),
	} {
		res, err := s.adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create ACL: %v %s", r.Err, r.ErrMessage)
			}
		}
	}
	alice, rate := "alice", 1024.0
	if _, err := s.adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &alice}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: rate}, {Key: "consumer_byte_rate", Value: 2 * rate}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 50}}},
	}); err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, s.base)

	br.start(t, "/acls")
	if n := br.count("#acls tbody tr"); n != 3 {
		t.Errorf("%d ACL rows, want 3 (alice read and describe, bob deny)", n)
	}
	row := func(sel string) string { return strings.Join(strings.Fields(br.text(sel)), " ") }
	if got, want := row(`#acls tr[data-resource="group:app-"]`), "User:bob 10.0.0.1 group app- prefixed read deny"; got != want {
		t.Errorf("bob's row %q, want %q", got, want)
	}
	if got := row(`#acls tr[data-principal="User:alice"]`); !strings.HasPrefix(got, "User:alice * topic orders literal") {
		t.Errorf("alice's row %q", got)
	}

	br.start(t, "/quotas")
	if n := br.count("#quotas tbody tr"); n != 2 {
		t.Errorf("%d quota rows, want 2", n)
	}
	if got := row(`#quotas tr[data-entity="user=alice"]`); got != "user=alice consumer_byte_rate = 2048 producer_byte_rate = 1024" {
		t.Errorf("alice's quotas %q", got)
	}
	if got := row(`#quotas tr[data-entity="client-id=<default>"]`); got != "client-id=<default> request_percentage = 50" {
		t.Errorf("default client-id quotas %q", got)
	}
	if n := br.count("#acls button, #quotas button, #quotas input"); n != 0 {
		t.Errorf("%d controls on read-only pages", n)
	}

	// Without an authorizer the broker keeps no ACLs and the page says so;
	// with no quotas the quota page says that.
	plain := seed(t)
	br2 := newBrowser(t, plain.base)
	br2.start(t, "/acls")
	br2.waitText("#acls-off", "without an authorizer")
	br2.start(t, "/quotas")
	br2.waitText("#no-quotas", "No client quotas")
}

// TestBrowserClusterNodes: on a simulated 3-node cluster the cluster page
// lists every node, a stopped one (which Metadata leaves out) as stopped.
func TestBrowserClusterNodes(t *testing.T) {
	chromium(t)
	s := seed(t, minikafka.WithNodes(3))
	if err := s.b.StopNode(2); err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, s.base)
	br.start(t, "/cluster")
	if n := br.count("#brokers tbody tr"); n != 3 {
		t.Fatalf("%d broker rows, want 3", n)
	}
	for node, want := range map[int]string{0: "up", 1: "up", 2: "stopped"} {
		if got := br.text(fmt.Sprintf(`#brokers tr[data-node="%d"] td.state`, node)); got != want {
			t.Errorf("node %d state %q, want %q", node, got, want)
		}
	}
}
