// Command benchtable turns Go benchmark output into the Markdown tables of
// BENCHMARKS.md: one row per benchmark, one column per value of a name key
// (impl=..., route=...), each cell the median of the runs, and the ratio of
// each column to the first, the base (benchstat gives the confidence
// intervals and p-values; this gives the table).
//
//	benchtable -col impl -unit sec/op [-filter REGEXP] [-paired] FILE...
//
// A ratio above 1 means the column's figure is larger than the base's: for
// sec/op, slower than the base; for req/s, more requests per second. With
// -paired the ratio is the median of the runs' own ratios (the i-th run of
// a column against the i-th run of the base), for runs made side by side
// on a machine whose load drifts, as cmd/loadbench's are.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	col := flag.String("col", "impl", "the name key whose values make the columns")
	unit := flag.String("unit", "sec/op", "the metric shown")
	filter := flag.String("filter", "", "only benchmarks whose name matches this regular expression")
	paired := flag.Bool("paired", false, "ratio: the median of run-by-run ratios")
	flag.Parse()
	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			fatal(err)
		}
	}
	var results []result
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fatal(err)
		}
		rs, err := parse(f)
		f.Close()
		if err != nil {
			fatal(fmt.Errorf("%s: %w", name, err))
		}
		results = append(results, rs...)
	}
	if re != nil {
		results = slices.DeleteFunc(results, func(r result) bool { return !re.MatchString(r.name) })
	}
	if err := table(os.Stdout, results, *col, *unit, *paired); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchtable:", err)
	os.Exit(1)
}

// result is one benchmark line: its full name (without "Benchmark") and
// its metrics by unit.
type result struct {
	name    string
	metrics map[string]float64
}

// parse reads the benchmark lines of r.
func parse(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // not a result line (a log line starting with the name)
		}
		res := result{name: strings.TrimPrefix(f[0], "Benchmark"), metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", sc.Text(), err)
			}
			unit := f[i+1]
			if unit == "ns/op" {
				unit, v = "sec/op", v/1e9
			}
			res.metrics[unit] = v
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// split returns name without its col=value element, and the value.
func split(name, col string) (row, value string) {
	parts := strings.Split(name, "/")
	suffix := ""
	last := parts[len(parts)-1]
	if i := strings.LastIndex(last, "-"); i > 0 {
		if _, err := strconv.Atoi(last[i+1:]); err == nil {
			parts[len(parts)-1], suffix = last[:i], last[i:]
		}
	}
	kept := parts[:0]
	for _, p := range parts {
		if v, ok := strings.CutPrefix(p, col+"="); ok {
			value = v
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "/") + suffix, value
}

func table(w io.Writer, results []result, col, unit string, paired bool) error {
	var rows, cols []string
	cells := map[[2]string][]float64{}
	for _, r := range results {
		v, ok := r.metrics[unit]
		if !ok {
			continue
		}
		row, c := split(r.name, col)
		if !slices.Contains(rows, row) {
			rows = append(rows, row)
		}
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
		cells[[2]string{row, c}] = append(cells[[2]string{row, c}], v)
	}
	if len(rows) == 0 {
		return fmt.Errorf("no benchmark reports %s", unit)
	}
	head := []string{"benchmark"}
	for i, c := range cols {
		head = append(head, label(col, c)+" "+unit)
		if i > 0 {
			head = append(head, label(col, c)+" / "+label(col, cols[0]))
		}
	}
	fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(head)))
	for _, row := range rows {
		line := []string{row}
		baseRuns := cells[[2]string{row, cols[0]}]
		base, hasBase := median(baseRuns)
		for i, c := range cols {
			runs := cells[[2]string{row, c}]
			m, ok := median(runs)
			cell := ""
			if ok {
				cell = format(m, unit)
			}
			line = append(line, cell)
			if i > 0 {
				ratio := ""
				if ok && hasBase && base != 0 {
					r := m / base
					if paired {
						r, _ = median(ratios(runs, baseRuns))
					}
					ratio = fmt.Sprintf("%.2f", r)
				}
				line = append(line, ratio)
			}
		}
		fmt.Fprintln(w, "| "+strings.Join(line, " | ")+" |")
	}
	return nil
}

// ratios returns runs[i]/base[i] for the runs both have.
func ratios(runs, base []float64) []float64 {
	var out []float64
	for i := range min(len(runs), len(base)) {
		if base[i] != 0 {
			out = append(out, runs[i]/base[i])
		}
	}
	return out
}

func label(col, value string) string {
	if value == "" {
		return "(no " + col + ")"
	}
	return value
}

func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2], true
	} else {
		return (s[n/2-1] + s[n/2]) / 2, true
	}
}

// format prints a time with its unit, and other metrics with three
// significant digits.
func format(v float64, unit string) string {
	if unit != "sec/op" {
		if math.Abs(v) >= 100 || v == math.Trunc(v) {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	switch {
	case v >= 1:
		return fmt.Sprintf("%.3g s", v)
	case v >= 1e-3:
		return fmt.Sprintf("%.3g ms", v*1e3)
	case v >= 1e-6:
		return fmt.Sprintf("%.3g µs", v*1e6)
	}
	return fmt.Sprintf("%.3g ns", v*1e9)
}
