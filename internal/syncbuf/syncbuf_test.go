package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 800, strings.Count(b.String(), "line\n"))
}
