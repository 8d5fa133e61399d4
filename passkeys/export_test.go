package passkeys

// ChallengeCounts reports how many ceremonies h's default challenge store
// holds: anonymous ones, and those of known users.
func ChallengeCounts(h *Handler) (anonymous, bound int) { return h.pool.len() }
