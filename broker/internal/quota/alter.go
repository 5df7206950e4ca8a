package quota

// AlterEntry is one entry of AlterClientQuotas: an entity's parts and its
// ops, in order.
type AlterEntry struct {
	Parts []Part
	Ops   []Op
}

// AlterEntries is AlterClientQuotas, as Kafka's ClientQuotaControlManager:
// each entry is validated alone (NewEntity, then ValidateValue for each
// set op; removals are not checked), errs[i] being entry i's
// *InvalidError. With validateOnly nothing changes; otherwise the valid
// entries apply together, in order (a key given twice keeps its last
// value), through Alter. When the write fails, stored is its error and so
// is each valid entry's errs[i]. applied counts the entities changed.
func (m *Manager) AlterEntries(entries []AlterEntry, validateOnly bool) (errs []error, applied int, stored error) {
	errs = make([]error, len(entries))
	changes := map[string]Change{}
	var valid []int
	for i, e := range entries {
		ent, err := validEntry(e)
		if errs[i] = err; err != nil || validateOnly {
			continue
		}
		c := changes[ent.Key()]
		c.Entity = ent
		c.Ops = append(c.Ops, e.Ops...)
		changes[ent.Key()] = c
		valid = append(valid, i)
	}
	if len(changes) == 0 {
		return errs, 0, nil
	}
	if stored = m.Alter(changes); stored != nil {
		for _, i := range valid {
			errs[i] = stored
		}
		return errs, 0, stored
	}
	return errs, len(changes), nil
}

func validEntry(e AlterEntry) (Entity, error) {
	ent, err := NewEntity(e.Parts)
	if err != nil {
		return nil, err
	}
	for _, op := range e.Ops {
		if op.Remove {
			continue
		}
		if err := ValidateValue(ent, op.Key, op.Value); err != nil {
			return nil, err
		}
	}
	return ent, nil
}
