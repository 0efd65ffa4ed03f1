package user

// ValidAccount reports whether a (trimmed) account name has the shape the
// API accepts: 1 to 64 characters, no white space or control characters.
// The operator's command line checks the accounts it creates with it.
func ValidAccount(account string) bool { return validAccount(account) }
