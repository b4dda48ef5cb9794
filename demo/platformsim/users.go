package platformsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"
)

const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// listUsers answers GET /public/users: a case-insensitive substring match
// of query on email and names, paged Spring-style (invalid paging values
// fall back to the defaults).
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, _ []byte) {
	q, sh := r.URL.Query(), s.cfg.Shapes
	needle := strings.ToLower(q.Get(sh.QueryParam))
	page := intParam(q.Get(sh.PageParam), sh.FirstPage) - sh.FirstPage
	size := intParam(q.Get(sh.SizeParam), defaultPageSize)
	if page < 0 {
		page = 0
	}
	if size <= 0 {
		size = defaultPageSize
	}
	size = min(size, maxPageSize)

	s.mu.Lock()
	match := make([]user, 0)
	for _, u := range s.users {
		if needle == "" || strings.Contains(strings.ToLower(u.Email), needle) ||
			strings.Contains(strings.ToLower(u.FirstName+" "+u.LastName), needle) {
			match = append(match, *u)
		}
	}
	s.mu.Unlock()
	from, to := min(page*size, len(match)), min((page+1)*size, len(match))
	items := make([]map[string]any, 0, to-from)
	for _, u := range match[from:to] {
		items = append(items, sh.userJSON(u))
	}
	writeJSON(w, http.StatusOK, sh.listJSON(items, page+sh.FirstPage, size, len(match)))
}

func intParam(v string, def int) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return n
}

// createUser answers POST /public/users.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request, body []byte) {
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil || in == nil {
		writeError(w, http.StatusBadRequest, "malformed JSON")
		return
	}
	fields := map[string]string{}
	for _, f := range []string{"firstName", "lastName", "email"} {
		v, ok := in[f].(string)
		if !ok || strings.TrimSpace(v) == "" {
			writeError(w, http.StatusBadRequest, "missing required field: "+f)
			return
		}
		fields[f] = v
	}
	email := fields["email"]
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || !strings.Contains(email[strings.LastIndexByte(email, '@'):], ".") {
		writeError(w, http.StatusBadRequest, "email: not a valid e-mail address")
		return
	}
	s.mu.Lock()
	if _, exists := s.byEmail[emailKey(email)]; exists {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "a user with this email already exists")
		return
	}
	if s.cfg.RacyCreate {
		// Check, pause, insert: another create of the email may pass its
		// check during the pause, and both insert.
		s.mu.Unlock()
		time.Sleep(s.cfg.RacyPause)
		s.mu.Lock()
	}
	u, err := s.newUser(fields["firstName"], fields["lastName"], email)
	s.mu.Unlock()
	if err != nil {
		s.cfg.Logger.Error("platform emulator: user not kept", "err", err)
		writeError(w, http.StatusInternalServerError, "the user could not be stored")
		return
	}
	writeJSON(w, http.StatusCreated, s.cfg.Shapes.userJSON(u))
}

// newUser gives a user the next id, keeps it and indexes it. Called with
// s.mu held.
func (s *Server) newUser(firstName, lastName, email string) (user, error) {
	u := &user{ID: s.nextID, FirstName: firstName, LastName: lastName, Email: email, Role: "USER"}
	if err := s.saveUser(userRecord{user: *u}); err != nil {
		return user{}, err
	}
	s.nextID++
	s.insertUser(u)
	return *u, nil
}

// insertUser indexes u. Called with s.mu held.
func (s *Server) insertUser(u *user) {
	s.users = append(s.users, u)
	s.byEmail[emailKey(u.Email)] = u
	s.byID[strconv.FormatInt(u.ID, 10)] = u
}

// removeUser drops the user with id, if any. Called with s.mu held.
func (s *Server) removeUser(id string) bool {
	u, ok := s.byID[id]
	if !ok {
		return false
	}
	delete(s.byID, id)
	delete(s.byEmail, emailKey(u.Email))
	for i, x := range s.users {
		if x == u {
			s.users = append(s.users[:i], s.users[i+1:]...)
			break
		}
	}
	return true
}

// User is a platform user as tests see it.
type User struct {
	ID        string
	FirstName string
	LastName  string
	Email     string
}

// AddUser creates a user directly (test and demo setup). Like the API, it
// refuses an email that exists in any case.
func (s *Server) AddUser(firstName, lastName, email string) (User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.byEmail[emailKey(email)]; exists {
		return User{}, fmt.Errorf("platformsim: user %s exists", email)
	}
	u, err := s.newUser(firstName, lastName, email)
	if err != nil {
		return User{}, err
	}
	return exportUser(&u), nil
}

// DeleteUser removes a user (to make a stored link stale in tests).
func (s *Server) DeleteUser(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.byID[id]
	if !ok || s.saveUser(userRecord{user: *u, Deleted: true}) != nil {
		return false
	}
	return s.removeUser(id)
}

// Users returns every user whose email equals email, ASCII letters folded
// (more than one would be a duplicate).
func (s *Server) Users(email string) []User {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []User
	for _, u := range s.users {
		if emailKey(u.Email) == emailKey(email) {
			out = append(out, exportUser(u))
		}
	}
	return out
}

// UserCount is the number of users on the platform.
func (s *Server) UserCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.users)
}

func exportUser(u *user) User {
	return User{ID: strconv.FormatInt(u.ID, 10), FirstName: u.FirstName, LastName: u.LastName, Email: u.Email}
}

// emailKey is the form under which the emulator keeps an email unique:
// ASCII letters folded, every other character as it is (Unicode case
// mapping would make "kİm@" a duplicate of "kim@").
func emailKey(email string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, email)
}
