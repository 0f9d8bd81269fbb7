package errmodel

//go:generate go run ./internal/generr -out residuals_gen.go
