package arch

import (
	"fmt"
	"strings"
)

// Precision is the number format of weights or of the KV cache.
type Precision int

// The precisions. The zero value is BF16.
const (
	// BF16 is 16-bit floating point (bf16 or fp16): 2 bytes per value.
	BF16 Precision = iota
	// FP8 is 8-bit floating point (per-tensor or block-scaled): 1 byte per
	// value; scales are ignored (under 0.1% of the bytes).
	FP8
	// FP4 is 4-bit floating point (NVFP4, MXFP4): 0.5 byte per value plus
	// one 8-bit scale per 16 values (NVFP4's layout; MXFP4's one per 32 is
	// smaller), 0.5625 bytes per value in all.
	FP4
	// INT4 is 4-bit integer weight-only quantization (int4_wo): 0.5 byte
	// per weight plus one 16-bit scale per 128 weights (0.515625 bytes),
	// with the arithmetic done in bf16.
	INT4
)

var precisionNames = [...]string{BF16: "bf16", FP8: "fp8", FP4: "fp4", INT4: "int4"}

// String returns the precision's canonical name: bf16, fp8, fp4 or int4.
func (p Precision) String() string {
	if p >= 0 && int(p) < len(precisionNames) {
		return precisionNames[p]
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// Valid reports whether p is one of the defined precisions.
func (p Precision) Valid() bool { return p >= BF16 && p <= INT4 }

// BytesPerValue returns the storage bytes per value, scales included: 2 for
// BF16, 1 for FP8, 0.5625 for FP4, 0.515625 for INT4 (see the constants).
func (p Precision) BytesPerValue() float64 {
	switch p {
	case FP8:
		return 1
	case FP4:
		return 0.5 + 1.0/16
	case INT4:
		return 0.5 + 2.0/128
	default:
		return 2
	}
}

// Compute returns the precision the matrix multiplications run at: INT4
// weights are dequantized and multiplied in BF16; the others compute at
// their own precision.
func (p Precision) Compute() Precision {
	if p == INT4 {
		return BF16
	}
	return p
}

// KVCache returns the precision the KV-cache is kept at when the weights
// are at p: fp8 for fp8 and fp4 weights (no engine keeps a 4-bit cache),
// bf16 for bf16 and for int4 weight-only quantization.
func (p Precision) KVCache() Precision {
	switch p {
	case FP8, FP4:
		return FP8
	}
	return BF16
}

// ParsePrecision parses a precision name, case-insensitively: bf16, fp16
// (counted as BF16), fp8, fp8_block, fp4, nvfp4, mxfp4, int4, int4_wo.
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bf16", "fp16", "bfloat16", "float16":
		return BF16, nil
	case "fp8", "fp8_block", "fp8-block", "float8":
		return FP8, nil
	case "fp4", "nvfp4", "mxfp4":
		return FP4, nil
	case "int4", "int4_wo", "int4-wo", "w4a16":
		return INT4, nil
	}
	return BF16, fmt.Errorf("arch: precision %q: expected one of bf16, fp16, fp8, fp8_block, fp4, nvfp4, mxfp4, int4, int4_wo", s)
}

// UnmarshalText parses text with ParsePrecision (for TOML and flags).
func (p *Precision) UnmarshalText(text []byte) error {
	v, err := ParsePrecision(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalText returns the canonical name (String).
func (p Precision) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("arch: invalid precision %d", int(p))
	}
	return []byte(p.String()), nil
}
