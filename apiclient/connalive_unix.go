//go:build unix

package apiclient

import (
	"errors"
	"net"
	"syscall"
)

// connAlive reports whether an idle connection is still open, by a
// non-blocking peek: nothing is consumed; end of stream or a reset means
// the platform closed it (its idle timeout), and data it sent unasked
// (a 408 before closing) means the same. One system call, before a
// request is written on a kept-alive connection: after the write, a
// closed connection could not be told from a platform that took the
// request and failed.
func connAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	var buf [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
		return true
	}); err != nil {
		return false
	}
	return alive
}
