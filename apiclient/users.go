package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ssobridge/ssobridge/mailaddr"
)

// UserID is the platform's opaque user identifier. The platform may send it
// as a JSON number or string, and numbers may exceed 2^53, so it is decoded
// without floats and kept as the exact text.
type UserID string

// UnmarshalJSON accepts a JSON string or number.
func (id *UserID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = UserID(s)
		return nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return fmt.Errorf("userId: %w", err)
	}
	*id = UserID(n.String())
	return nil
}

// User is a platform user.
type User struct {
	UserID    UserID `json:"userId"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Email     string `json:"email"`
	Role      string `json:"role,omitempty"`
}

// NewUser is what creating a user sends.
type NewUser struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Email     string `json:"email"`
}

// Validate checks the fields the platform requires, so a bad account is
// refused before any call.
func (u NewUser) Validate() error {
	if strings.TrimSpace(u.FirstName) == "" || strings.TrimSpace(u.LastName) == "" {
		return fmt.Errorf("%w: first and last name are required", ErrInvalidInput)
	}
	if !mailaddr.Valid(u.Email) {
		return fmt.Errorf("%w: %q is not a valid e-mail address", ErrInvalidInput, u.Email)
	}
	return nil
}

// ErrInvalidInput is input refused before any platform call.
var ErrInvalidInput = errors.New("invalid input")

// UserPage is one page of the user list, read through the shapes.
type UserPage struct {
	Content []User
	// TotalPages is the page count the answer gives; -1 when the shapes
	// name none (platform.shapes.list_total_pages "-").
	TotalPages int
	// TotalElements is the answer's "totalElements" beside the page count,
	// -1 when it has none (the console's pager then counts what it saw).
	TotalElements int64
}

// ListUsers fetches one page of users matching query (a substring filter).
func (c *Client) ListUsers(ctx context.Context, query string, page, size int) (UserPage, error) {
	s := c.opts.Shapes
	q := url.Values{}
	if query != "" {
		q.Set(s.QueryParam, query)
	}
	q.Set(s.PageParam, strconv.Itoa(page))
	q.Set(s.SizeParam, strconv.Itoa(size))
	var raw json.RawMessage
	if _, err := c.do(ctx, call{endpoint: EndpointListUsers, method: http.MethodGet, path: s.UsersPath, query: q, rule: retrySafe}, &raw); err != nil {
		return UserPage{}, err
	}
	return s.readPage(raw)
}

// readPage reads a list answer through the shapes.
func (s Shapes) readPage(raw []byte) (UserPage, error) {
	v, err := decodeAny(raw)
	if err != nil {
		return UserPage{}, fmt.Errorf("%w: list_users: %w", ErrBadResponse, err)
	}
	items, err := at(v, s.ListItems)
	list, ok := items.([]any)
	if err == nil && items == nil {
		ok = true // null: no users
	}
	if err != nil || !ok {
		return UserPage{}, &ShapeMismatch{Key: "list_items", Problem: fmt.Sprintf("no array at `%s`; %s", s.ListItems, describeShape(v))}
	}
	p := UserPage{Content: make([]User, 0, len(list)), TotalPages: -1, TotalElements: -1}
	for i, item := range list {
		u, err := s.readUser(item)
		if err != nil {
			var sm *ShapeMismatch
			if errors.As(err, &sm) {
				sm.Problem = fmt.Sprintf("item %d of `%s`: %s", i, s.ListItems, sm.Problem)
			}
			return UserPage{}, err
		}
		p.Content = append(p.Content, u)
	}
	if s.ListTotalPages != NoTotalPages {
		n, ok := textAt(v, s.ListTotalPages)
		total, err := strconv.Atoi(n)
		if !ok || err != nil || total < 0 {
			return UserPage{}, &ShapeMismatch{Key: "list_total_pages", Problem: fmt.Sprintf("no page count at `%s`; %s (set it to \"-\" when the answer has none)", s.ListTotalPages, describeObject(v))}
		}
		p.TotalPages = total
		// The user count, when the answer has one beside the page count.
		count := "totalElements"
		if i := strings.LastIndexByte(s.ListTotalPages, '.'); i >= 0 {
			count = s.ListTotalPages[:i] + ".totalElements"
		}
		if n, ok := textAt(v, count); ok {
			p.TotalElements, _ = strconv.ParseInt(n, 10, 64)
		}
	}
	return p, nil
}

// readUser reads one user object through the shapes: its id and email
// where the shapes say, its names and role as the spec spells them when
// present.
func (s Shapes) readUser(item any) (User, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return User{}, &ShapeMismatch{Key: "list_items", Problem: "not an object"}
	}
	var u User
	id, ok := textAt(obj, s.UserID)
	if !ok || id == "" {
		return User{}, &ShapeMismatch{Key: "user_id", Problem: fmt.Sprintf("no id (string or number) at `%s`; %s", s.UserID, describeObject(obj))}
	}
	u.UserID = UserID(id)
	if u.Email, ok = textAt(obj, s.UserEmail); !ok {
		return User{}, &ShapeMismatch{Key: "user_email", Problem: fmt.Sprintf("no email at `%s`; %s", s.UserEmail, describeObject(obj))}
	}
	u.FirstName, _ = textAt(obj, "firstName")
	u.LastName, _ = textAt(obj, "lastName")
	u.Role, _ = textAt(obj, "role")
	return u, nil
}

// FindUserByEmail walks the pages of the lookup and returns the user whose
// email equals email (ASCII letters folded). The platform's filter is a
// substring match, so decoys (bob@example.com.au for bob@example.com) are
// skipped here. The walk ends at the last page (by the page count, or at
// a short or empty page when the answer gives none). found is false when
// no user matches.
func (c *Client) FindUserByEmail(ctx context.Context, email string) (u User, found bool, err error) {
	s := c.opts.Shapes
	for i := 0; i < s.MaxPages; i++ {
		p, err := c.ListUsers(ctx, email, s.FirstPage+i, s.PageSize)
		if err != nil {
			return User{}, false, err
		}
		for _, cand := range p.Content {
			if mailaddr.Equal(cand.Email, email) {
				return cand, true, nil
			}
		}
		last := len(p.Content) == 0
		if p.TotalPages >= 0 {
			last = last || i+1 >= p.TotalPages
		} else {
			last = last || len(p.Content) < s.PageSize
		}
		if last {
			return User{}, false, nil
		}
	}
	return User{}, false, fmt.Errorf("apiclient: lookup of %s stopped after %d pages", email, s.MaxPages)
}

// CreateUser creates a user. It is never retried blindly: only a 429
// (a refusal, nothing created) is resent.
func (c *Client) CreateUser(ctx context.Context, nu NewUser) (User, error) {
	if err := nu.Validate(); err != nil {
		return User{}, err
	}
	var raw json.RawMessage
	if _, err := c.do(ctx, call{endpoint: EndpointCreateUser, method: http.MethodPost, path: c.opts.Shapes.UsersPath, body: nu, rule: retryOn429Only}, &raw); err != nil {
		return User{}, err
	}
	v, err := decodeAny(raw)
	if err != nil {
		return User{}, fmt.Errorf("%w: create_user: %w", ErrBadResponse, err)
	}
	u, err := c.opts.Shapes.readUser(v)
	if err != nil {
		return User{}, fmt.Errorf("%w: the created user: %w", ErrBadResponse, err)
	}
	return u, nil
}

// EnsureResult tells how EnsureUser found its user.
type EnsureResult struct {
	User    User
	Created bool // this call created the user
}

// EnsureUser returns the platform user for nu.Email, creating it only if
// no user has that email (check-then-create). A 409 on create means
// someone else created it: it is looked up again. After a 5xx or timeout
// on create the user is looked up before any second create, because the
// create may have succeeded (a "ghost create"). Concurrent calls for one
// email share one operation.
func (c *Client) EnsureUser(ctx context.Context, nu NewUser) (EnsureResult, error) {
	if err := nu.Validate(); err != nil {
		return EnsureResult{}, err
	}
	key := mailaddr.Key(nu.Email)
	ch := c.ensures.DoChan(key, func() (any, error) {
		// Detached from the first caller's cancellation (its values, such
		// as the call counter, stay), bounded by its deadline: a launch in
		// line waits for the platform's turn as long as its place allows
		// (its arrival plus platform.max_wait), each call within
		// platform.timeout; only a caller without a deadline gets
		// EnsureTimeout.
		sctx, cancel := sharedContext(ctx, c.opts.EnsureTimeout)
		defer cancel()
		res, err := c.ensure(sctx, nu)
		return &sharedEnsure{res: res}, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return EnsureResult{}, r.Err
		}
		shared := r.Val.(*sharedEnsure)
		res := shared.res
		// Every caller sees Shared; exactly one of them reports the creation.
		res.Created = res.Created && shared.claimed.CompareAndSwap(false, true)
		return res, nil
	case <-ctx.Done():
		return EnsureResult{}, &TransportError{Endpoint: "ensure_user", Method: http.MethodGet, Timeout: errors.Is(ctx.Err(), context.DeadlineExceeded), Err: ctx.Err()}
	}
}

// sharedContext is ctx without its cancellation, with its deadline (or,
// without one, fallback from now).
func sharedContext(ctx context.Context, fallback time.Duration) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(base, d)
	}
	return context.WithTimeout(base, fallback)
}

// sharedEnsure is the result of one EnsureUser operation handed to every
// caller that joined it.
type sharedEnsure struct {
	res     EnsureResult
	claimed atomic.Bool
}

func (c *Client) ensure(ctx context.Context, nu NewUser) (EnsureResult, error) {
	learned, _ := ctx.Value(learnedKey{}).(*Learned)
	key := mailaddr.Key(nu.Email)
	if learned == nil || !learned.knownAbsent(key, c.opts.Now()) {
		u, found, err := c.FindUserByEmail(ctx, nu.Email)
		if err != nil {
			return EnsureResult{}, err
		} else if found {
			return EnsureResult{User: u}, nil
		}
		if learned != nil {
			learned.noteAbsent(key, c.opts.Now())
		}
	}
	const maxCreates = 2
	var lastErr error
	for i := 0; i < maxCreates; i++ {
		u, err := c.CreateUser(ctx, nu)
		if err == nil {
			return EnsureResult{User: u, Created: true}, nil
		}
		lastErr = err
		ambiguous := errors.Is(err, ErrServer) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrUnreachable)
		if !errors.Is(err, ErrConflict) && !ambiguous {
			return EnsureResult{}, err
		}
		u, found, ferr := c.FindUserByEmail(ctx, nu.Email)
		if ferr != nil {
			return EnsureResult{}, fmt.Errorf("%w (and the lookup after it failed: %w)", err, ferr)
		}
		if found {
			return EnsureResult{User: u}, nil
		}
		if errors.Is(err, ErrConflict) {
			// 409 but not listed: the platform holds the email in a way
			// the lookup cannot see. Creating again would only conflict.
			return EnsureResult{}, fmt.Errorf("%w, but no user with that email is listed", err)
		}
	}
	return EnsureResult{}, lastErr
}
