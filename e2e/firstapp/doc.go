// Package firstapp tests docs/developers/first-app.md, "Your first admin
// app", as a reader runs it: the page's marked shell and Go blocks are
// executed verbatim, in order, in an empty temporary folder, against this
// checkout of the kernel (a replace directive). The marker convention is
// described in the test.
//
// It has no code outside its tests.
package firstapp
