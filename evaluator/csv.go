package evaluator

import (
	"bufio"
	"io"
	"strconv"
)

// RequestsCSVHeader lists the columns of WriteRequestsCSV.
const RequestsCSVHeader = "request_id,arrival_s,prompt_tokens,output_tokens,queue_s,ttft_s,tbt_s,tbt_reference_s," +
	"max_gap_s,e2e_s,prompt_machine,token_machine,transferred,transfer_s,borrowed,preemptions,sched_delay_s"

// WriteRequestsCSV writes one row per request (times in seconds).
func WriteRequestsCSV(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(RequestsCSVHeader + "\n")
	var b []byte
	f := func(v float64) {
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		b = append(b, ',')
	}
	i := func(v int) {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ',')
	}
	t := func(v bool) {
		b = strconv.AppendBool(b, v)
		b = append(b, ',')
	}
	for _, r := range res.Requests {
		b = b[:0]
		i(r.ID)
		f(r.ArrivalS)
		i(r.PromptTokens)
		i(r.OutputTokens)
		f(r.QueueS)
		f(r.TTFTS)
		f(r.TBTS)
		f(r.TBTReferenceS)
		f(r.MaxGapS)
		f(r.E2ES)
		i(r.PromptMachine)
		i(r.TokenMachine)
		t(r.Transferred)
		f(r.TransferS)
		t(r.Borrowed)
		i(r.Preemptions)
		f(r.SchedDelayS)
		b[len(b)-1] = '\n'
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// MachinesCSVHeader lists the columns of WriteMachinesCSV.
const MachinesCSVHeader = "machine,type,pool,role,pool_moves,busy_s,prompt_iterations,decode_iterations,mixed_iterations," +
	"peak_kv_bytes,kv_capacity_bytes"

// WriteMachinesCSV writes one row per machine.
func WriteMachinesCSV(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(MachinesCSVHeader + "\n")
	for _, m := range res.Machines {
		var b []byte
		b = strconv.AppendInt(b, int64(m.ID), 10)
		b = append(b, ',')
		b = append(b, m.Type...)
		b = append(b, ',')
		b = append(b, m.Pool...)
		b = append(b, ',')
		b = append(b, m.Role...)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(m.PoolMoves), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, m.BusyS, 'g', -1, 64)
		for _, v := range []int64{m.PromptIters, m.DecodeIters, m.MixedIters, m.PeakMemoryBytes, m.CapacityBytes} {
			b = append(b, ',')
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}
