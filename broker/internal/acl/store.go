package acl

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"sync/atomic"

	"github.com/minikafka/minikafka/internal/vfs"
)

// FileName is the ACL file's name in the data directory.
const FileName = "acls"

// Store is the authorizer's bindings: the Set in force (an atomic
// pointer, replaced whole by each change once the file holds it) and the
// file. Decisions load the Set and take no lock.
type Store struct {
	fs      vfs.FS
	file    string
	set     atomic.Pointer[Set]
	alterMu sync.Mutex // one change (and file write) at a time
}

// Open validates the settings' super users and loads dir's ACL file
// (none: no bindings); a damaged file is an error, which stops the
// broker's start.
func Open(fsys vfs.FS, dir string, st Settings) (*Store, error) {
	for _, u := range st.SuperUsers {
		if err := ValidatePrincipal(u); err != nil {
			return nil, fmt.Errorf("broker: super user %q: %v", u, err)
		}
	}
	s := &Store{fs: fsys, file: path.Join(dir, FileName)}
	data, err := vfs.ReadFile(fsys, s.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.set.Store(NewSet(nil, 1, st))
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("broker: reading ACLs %s: %w", s.file, err)
	}
	bs, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("broker: ACL file %s is damaged: %w", s.file, err)
	}
	s.set.Store(NewSet(bs, 1, st))
	return s, nil
}

// Set is the bindings in force.
func (s *Store) Set() *Set { return s.set.Load() }

// change applies fn to the current set and makes the result durable
// before anyone can be decided by it.
func (s *Store) change(fn func(*Set) *Set) error {
	s.alterMu.Lock()
	defer s.alterMu.Unlock()
	next := fn(s.set.Load())
	if err := vfs.WriteFileAtomic(s.fs, s.file, Encode(next), 0o600); err != nil {
		return fmt.Errorf("broker: writing ACLs: %w", err)
	}
	s.set.Store(next)
	return nil
}

// Create is CreateAcls: each binding is validated (errs[i] is bs[i]'s
// *InvalidError) and the valid ones are stored together, durably. When
// the write fails, stored is its error and so is each valid binding's
// errs[i]; a nil errs[i] means bs[i] is in force.
func (s *Store) Create(bs []Binding) (errs []error, stored error) {
	errs = make([]error, len(bs))
	var valid []Binding
	for i, b := range bs {
		if errs[i] = b.Validate(); errs[i] == nil {
			valid = append(valid, b)
		}
	}
	if len(valid) == 0 {
		return errs, nil
	}
	if stored = s.change(func(cur *Set) *Set { return cur.Create(valid) }); stored != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = stored
			}
		}
	}
	return errs, stored
}

// Delete is DeleteAcls: every binding a valid filter selects is removed
// in one durable change, and removed[i] lists those filters[i] selected.
// errs[i] is filters[i]'s *InvalidError, or the write's failure (stored)
// for each valid filter.
func (s *Store) Delete(filters []Filter) (removed [][]Binding, errs []error, stored error) {
	removed, errs = make([][]Binding, len(filters)), make([]error, len(filters))
	var valid []Filter
	var at []int
	for i, f := range filters {
		if errs[i] = f.Validate(); errs[i] == nil {
			valid, at = append(valid, f), append(at, i)
		}
	}
	if len(valid) == 0 {
		return removed, errs, nil
	}
	var rm [][]Binding
	stored = s.change(func(cur *Set) *Set {
		next, r := cur.Delete(valid)
		rm = r
		return next
	})
	for j, i := range at {
		if stored != nil {
			errs[i] = stored
		} else {
			removed[i] = rm[j]
		}
	}
	return removed, errs, stored
}

// Describe is DescribeAcls: the bindings f selects, grouped by resource
// pattern in the order each pattern first appears.
func (s *Store) Describe(f Filter) ([][]Binding, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	type pattern struct {
		rt   ResourceType
		name string
		pt   PatternType
	}
	at := map[pattern]int{}
	var out [][]Binding
	for _, b := range s.Set().Filter(f) {
		k := pattern{b.ResourceType, b.Name, b.Pattern}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], b)
	}
	return out, nil
}
