package apiclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ssobridge/ssobridge/apiclient"
)

// Sign a request by hand, as the platform expects it.
func ExampleSigner_Sign() {
	s, _ := apiclient.NewSigner(apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: "partner-key-1", APISecret: "s3cr3t/with+chars=="})
	req, _ := http.NewRequest("GET", "https://platform.example.com/api/5/public/users", nil)
	s.Sign(req, nil, time.Date(2026, 11, 22, 4, 5, 6, 0, time.UTC))
	fmt.Println(req.Header.Get("Date"))
	fmt.Println(req.Header.Get("Authorization"))
	// Output:
	// Sun, 22 Nov 2026 04:05:06 UTC
	// SVC partner-key-1:82X6w6qdtlirMyLyqTAo5H5hvdx1yWXIDTn2VQ3lRS8=
}

// Provision a user and send the browser to the exchange URL.
func ExampleClient_EnsureUser() {
	platform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /api/5/public/users":
			_ = json.NewEncoder(w).Encode(map[string]any{"content": []any{}, "totalPages": 0})
		case "POST /api/5/public/users":
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"userId": 9007199254740993, "email": "ada@example.com"})
		case "POST /api/5/login-token/9007199254740993":
			_ = json.NewEncoder(w).Encode(map[string]any{"loginToken": "one-time", "expiresIn": 300})
		}
	}))
	defer platform.Close()

	c, err := apiclient.New(apiclient.Options{BaseURL: platform.URL,
		Credentials: apiclient.Credentials{Method: apiclient.AuthHMAC, APIKey: "k", APISecret: "s"}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	res, err := c.EnsureUser(ctx, apiclient.NewUser{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	if err != nil {
		panic(err)
	}
	tok, err := c.IssueLoginToken(ctx, res.User.UserID, apiclient.TokenProperties{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.User.UserID, res.Created)
	fmt.Println(c.ExchangeURL(tok)[len(platform.URL):])
	// Output:
	// 9007199254740993 true
	// /api/5/login-token/login/one-time
}
