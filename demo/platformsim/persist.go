package platformsim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// userRecord is one line of the users file: a user created, or (Deleted)
// removed.
type userRecord struct {
	user
	Deleted bool `json:"deleted,omitempty"`
}

// loadUsers reads the users file into s (a missing file is an empty
// platform) and sets the next id past every id the file ever held, so a
// restarted emulator keeps its users and never hands out an id twice: a
// bridge's stored link to an id then always means the same person. A
// last line without its newline (a write cut short) is ignored.
func (s *Server) loadUsers(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("platformsim: users file: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil { // io.EOF: a complete file ends with '\n'
			break
		}
		var rec userRecord
		if err := json.Unmarshal(line, &rec); err != nil || rec.ID < FirstUserID {
			return fmt.Errorf("platformsim: users file %s, line %d: not a user record (delete the file to start with no users)", path, n)
		}
		s.nextID = max(s.nextID, rec.ID+1)
		if rec.Deleted {
			s.removeUser(strconv.FormatInt(rec.ID, 10))
			continue
		}
		u := rec.user
		if _, dup := s.byEmail[emailKey(u.Email)]; dup {
			return fmt.Errorf("platformsim: users file %s, line %d: %s is there twice (delete the file to start with no users)", path, n, u.Email)
		}
		s.insertUser(&u)
	}
	return nil
}

// saveUser appends rec to the users file, if there is one. Called with
// s.mu held, so lines are written in the order ids were given.
func (s *Server) saveUser(rec userRecord) error {
	if s.cfg.UsersFile == "" {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.cfg.UsersFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("platformsim: users file: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	return errors.Join(werr, f.Close())
}
