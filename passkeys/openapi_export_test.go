package passkeys

import "strconv"

// OpenAPIListedCodes returns the codes the rows of pkOps list, each as
// "METHOD PATH STATUS CODE", for TestOpenAPIListedCodesAnswered (package
// passkeys_test, which has the test environment).
func OpenAPIListedCodes() []string {
	var out []string
	for _, op := range pkOps {
		for _, e := range op.errs {
			out = append(out, op.method+" "+op.path+" "+strconv.Itoa(e.Status)+" "+string(e.Code))
		}
	}
	return out
}
