package sqlstore

import (
	"sync"

	"github.com/ssobridge/ssobridge/store"
)

// stampMemo remembers the link stamps (see LaunchStampEvery) this process
// made lately, so a launch whose link was stamped less than a minute ago
// writes no stamp at all: most launches, under load. Another instance may
// have stamped meanwhile; the stamping statements check the stored stamp
// as well.
type stampMemo struct {
	mu    sync.Mutex
	last  map[int64]int64 // account -> when (unix ms) this process last stamped its link
	sweep int64           // when last was last swept
}

// due keeps, of stamps (account -> launch time, unix ms), those this
// process has not made in the last LaunchStampEvery, and notes them as
// made.
func (m *stampMemo) due(stamps map[int64]int64) (ids, at []int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[int64]int64{}
	}
	every := store.LaunchStampEvery.Milliseconds()
	for id, t := range stamps {
		if last, ok := m.last[id]; ok && t < last+every {
			continue
		}
		m.last[id] = t
		ids, at = append(ids, id), append(at, t)
		if t-m.sweep >= every { // forget what is no longer recent, once a minute
			m.sweep = t
			for k, v := range m.last {
				if t-v >= every {
					delete(m.last, k)
				}
			}
		}
	}
	return ids, at
}

// forget undoes due's note after a failed write.
func (m *stampMemo) forget(ids []int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		delete(m.last, id)
	}
}
