package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAPITable checks the table is sorted with no duplicate keys, every
// range is sane, and no max version exceeds what kmsg (the codec protocol
// decodes with) supports, so we never advertise a version we cannot parse.
func TestAPITable(t *testing.T) {
	for i, a := range apis {
		if i > 0 && apis[i-1].key >= a.key {
			t.Errorf("table not sorted or duplicate at key %d (after %d)", a.key, apis[i-1].key)
		}
		if a.min < 0 || a.min > a.max {
			t.Errorf("key %d: bad range %d..%d", a.key, a.min, a.max)
		}
		req := kmsg.RequestForKey(a.key)
		if req == nil {
			t.Errorf("key %d: unknown to kmsg", a.key)
			continue
		}
		if a.max > req.MaxVersion() {
			t.Errorf("key %d (%s): max %d above kmsg's %d", a.key, kmsg.NameForKey(a.key), a.max, req.MaxVersion())
		}
		if a.fn == nil {
			t.Errorf("key %d: nil handler", a.key)
		}
		if lookupAPI(a.key) != &apis[i] {
			t.Errorf("key %d: index does not point at its row", a.key)
		}
	}
}
