package auth

// Modules is the part of a Service that framework modules (nethttpauth,
// ginauth, fiberauth) and extension modules (passkeys, pages, otelauth)
// call: the route table (Routes, Paths, AddRoutes, Handle) and its
// answers (Answer, NotFound, MethodNotAllowed, Error, Text), the
// decisions a sign-in method or second factor outside core shares
// (PendingTwoFactorUser, FinishTwoFactor, SignInWithoutPassword), the
// reports of its flows (Observe, ObserveOneTime, Audit, Notify), and the
// stores and session manager as the Service holds them. An app needs none
// of it: [Service] is the app's API (the flows, the middleware decisions,
// Visit, CheckOrigin, Support, OpenAPI, Close).
type Modules Service

// Modules returns the module-facing part of s: s itself, seen from a
// module (no copy, nothing allocated), safe for concurrent use.
func (s *Service) Modules() *Modules { return (*Modules)(s) }

// svc is the Service m is part of.
func (m *Modules) svc() *Service { return (*Service)(m) }
