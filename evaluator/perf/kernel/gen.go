package kernel

//go:generate go run ./internal/genkernel
