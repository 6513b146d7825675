// Package layout holds no code: its test checks the module's package
// layout (docs/design-notes.md, "Built-ins out of kernel/"): package kernel
// is the contract alone, the catalogue of built-in operators and families
// lives in package builtin, written against kernel only, and the packages
// that store and read results (store, policy, result) do not depend on the
// catalogue.
package layout
