package social

// Presets: the providers whose issuer is fixed, configured as this
// package's rules want them. Each is an OIDC provider (discovery at the
// first sign-in) named as the routes will show it.

// Google is "Sign in with Google" (https://accounts.google.com): an OAuth
// client of type "Web application" in the Google Cloud console, with
// AppURL + "/api/auth/oauth/google/callback" as its authorized redirect
// URI. Google says email_verified only for an address it checked, so it is
// authoritative for every domain.
func Google(clientID, clientSecret string) (ProviderConfig, error) {
	return preset("google", "Google", "https://accounts.google.com", clientID, clientSecret, "*")
}

// GitLab is "Sign in with GitLab" on gitlab.com: an application under
// User Settings, Applications, with the scopes openid, email and profile
// and AppURL + "/api/auth/oauth/gitlab/callback" as its redirect URI.
// GitLab says email_verified only for a confirmed address: authoritative
// for every domain.
func GitLab(clientID, clientSecret string) (ProviderConfig, error) {
	return preset("gitlab", "GitLab", "https://gitlab.com", clientID, clientSecret, "*")
}

// Microsoft is "Sign in with Microsoft" for one Entra ID tenant (issuer
// https://login.microsoftonline.com/{tenant}/v2.0; the multi-tenant
// "common" endpoint names no single issuer and is not supported): an app
// registration with AppURL + "/api/auth/oauth/microsoft/callback" as a Web
// redirect URI. Its email claim is an attribute the tenant's users or
// admins may set to any address, unverified (the "nOAuth" class), so it
// is authoritative for no domain: a first sign-in never links an existing
// account or creates one by email; users link Microsoft from their
// account.
func Microsoft(tenant, clientID, clientSecret string) (ProviderConfig, error) {
	return preset("microsoft", "Microsoft", "https://login.microsoftonline.com/"+tenant+"/v2.0", clientID, clientSecret)
}

func preset(name, label, issuer, clientID, clientSecret string, authoritative ...string) (ProviderConfig, error) {
	p, err := NewOIDC(OIDCConfig{Issuer: issuer, ClientID: clientID, ClientSecret: clientSecret})
	if err != nil {
		return ProviderConfig{}, err
	}
	return ProviderConfig{Name: name, Label: label, Provider: p, Authoritative: authoritative}, nil
}
