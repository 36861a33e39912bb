// Package limits is the one place where relayout's sizes are derived from
// the user's two budgets, --max-mem and --jobs: For computes every limit
// once (Limits), and the rewriter and the verifier read its fields instead
// of dividing the budget again each in its own way. Each field says what it
// bounds and why its divisor. It holds no state and allocates nothing: the
// bytes in flight are charged to a budget of package membudget.
//
// Pure Go; of relayout it imports nothing.
package limits
