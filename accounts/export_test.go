package accounts

// LostConnection is lostConnection, for the external tests.
var LostConnection = lostConnection
