package broker

import (
	"log/slog"
	"time"
)

// loadProducerState rebuilds p's idempotence state from the batch headers
// at the tail of its store (its log, or its spool once forwarded): see
// producers.State.Rebuild. The caller holds p.mu.
func (p *partition) loadProducerState(log *slog.Logger, now time.Time) {
	st := p.store()
	if err := p.producers.Rebuild(st.logStart(), st.logEnd(), st.eachBatchHeader, now); err != nil {
		log.Warn("rebuilding producer state", "topic", p.topic.name, "partition", p.index, "err", err)
	}
}
