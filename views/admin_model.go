package views

// Admin sections, for the navigation.
const (
	SectionConnection    = "connection"
	SectionAccounts      = "accounts"
	SectionPlatformUsers = "platform-users"
	SectionAudit         = "audit"
	SectionProvisioning  = "provisioning"
	SectionBans          = "bans"
)

// BansPage lists the sign-in bans in force.
type BansPage struct {
	Rows          []BanRow
	Notice, Error string
}

// BanRow is one ban: Kind and Value are what lifting it posts; What,
// Shown and Why are what the admin reads.
type BanRow struct {
	Kind, Value      string
	What, Shown, Why string
	Until, Left      string // UTC; time left
}

// Pager links a paged list.
type Pager struct {
	Page    int // 1-based
	Pages   int
	Total   int
	PrevURL string // empty on the first page
	NextURL string // empty on the last page
}

// Connection is the Instance connection page.
type Connection struct {
	BaseURL  string
	Embedded bool
	Method   string
	Scheme   string
	KeyID    string
	Result   *CheckView // nil until a check ran
}

// CheckView is one connection check's verdict.
type CheckView struct {
	OK      bool
	Verdict string
	Summary string
	Advice  []string
	Status  string
	Latency string
	Clock   string
	URL     string
}

// AccountsPage is the accounts list with its forms.
type AccountsPage struct {
	Query        string
	Rows         []AccountRow
	Pager        Pager
	Notice       string
	Error        string
	New          NewAccountForm
	ImportCSV    string
	ImportErrors []string
}

// AccountPage is one account's page: its state and every action on it.
type AccountPage struct {
	Account    AccountRow
	Notice     string
	Error      string
	InviteLink string // a set-password link just issued (shown once)
	// WaysIn are the outside identities linked to the account: the way in
	// (its kind and source) and the person's id there.
	WaysIn []WayIn
}

// WayIn is one outside identity linked to an account.
type WayIn struct {
	Source  string // "lti:https://canvas.example", "oidc:https://idp.example", "saml", "portal:..."
	Subject string
	Linked  string // when, human
}

// NewAccountForm keeps what was typed into the create form.
type NewAccountForm struct {
	Email, FirstName, LastName string
	Admin                      bool
}

// AccountRow is one account in the list.
type AccountRow struct {
	ID             int64
	Email          string
	Name           string
	Admin          bool
	Disabled       bool
	NoPassword     bool
	PlatformUserID string
	LinkedAt       string
	LastLaunch     string
	BannedUntil    string // empty unless a sign-in ban holds
	// LooksLike is another account's address that this one can be
	// mistaken for; MixedScripts, that a part of it mixes Latin with
	// Cyrillic or Greek letters. Both warn of a pose.
	LooksLike    string
	MixedScripts bool
	// ManagedByIdP: the partner's identity provider owns the account's
	// details, status and admin role (SCIM); ChangedAt is its last change.
	ManagedByIdP bool
	ChangedAt    string
}

// PlatformUsersPage is one page of the platform's users.
type PlatformUsersPage struct {
	Query string
	Rows  []PlatformUserRow
	Pager Pager
	Error string
}

// PlatformUserRow is one platform user.
type PlatformUserRow struct {
	UserID   string
	Name     string
	Email    string
	LinkedTo string // local account email, empty if none
	// AddressDiffers: the linked account's address is not the platform
	// user's (a link to someone else's platform user).
	AddressDiffers bool
}

// AuditPage is the audit log.
type AuditPage struct {
	Account, Kind, Outcome string
	Rows                   []AuditRow
	Pager                  Pager
	Retention              string
	Window                 int // how many of the newest events the filters and counts cover
	Error                  string
}

// AuditRow is one audit event.
type AuditRow struct {
	At, Kind, Email, Outcome, Detail, RequestID string
	Calls                                       int
	Latency                                     string
}

// SessionsPage lists one account's signed-in devices.
type SessionsPage struct {
	AccountID int64
	Email     string
	Rows      []SessionRow
	Notice    string
	Error     string
}

// SessionRow is one signed-in device.
type SessionRow struct {
	ID         string // the stored session ID (names it in the end form)
	ShortID    string // its first characters, for people
	Created    string
	LastSeen   string
	UserAgent  string
	ThisDevice bool // the admin's own session
}

// ProvisioningPage is the console's provisioning: how many accounts are
// linked to their platform users, and the background job.
type ProvisioningPage struct {
	Linked, Unlinked int
	HasJob           bool
	Running          bool // running now: the page reloads itself
	State            string
	StartedBy        string
	Total, Done      int
	Created, Existed int
	Failed           int
	RateLimited      int // 429s met while it ran
	Notice, Error    string
	// Embedded: the demo's built-in emulator, which only this page can
	// provision on (the provision command needs a platform of its own).
	Embedded bool
	// Still: the admin stopped the page's reloads while the job runs.
	Still bool
}
