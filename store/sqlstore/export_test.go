package sqlstore

// LostConnection is lostConnection, for the external tests.
var LostConnection = lostConnection
