// Copyright 2026 The operator101 Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Command charts draws the bench's charts from one bench JSON file (bin/bench/bench-<time>.json), per size:
// objects Available over time for the lower bound, the peer and operator101 on one chart
// (<json>-n<N>-available.svg), and the resident memory of the peer and of operator101's manager over the same
// time (<json>-n<N>-rss.svg). It is a module of its own so that the plotting library stays out of the
// operator's go.mod; it reads the JSON with its own types and imports nothing of the operator.
//
//	charts bin/bench/bench-20261125-010203.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// The parts of the bench's JSON report the charts read (test/bench/cmd/bench/report.go).
type report struct {
	Date  string `json:"date"`
	Label string `json:"label"`
	Sizes []struct {
		Plan struct {
			N int `json:"n"`
		} `json:"plan"`
		LowerBound []struct {
			Workers    int       `json:"workers"`
			Seconds    float64   `json:"seconds"`
			Done       []float64 `json:"done"`
			PeakRSSMiB float64   `json:"peakRSSMiB"`
		} `json:"lowerBound"`
		LowerBoundW int `json:"lowerBoundBestWorkers"`
		Peer        *struct {
			AvailableSeconds []float64 `json:"availableSeconds"`
			RSS              []sample  `json:"rss"`
			Rounds           []round   `json:"rounds"`
		} `json:"peer"`
		AvailableSeconds []float64 `json:"availableSeconds"`
		RSS              []sample  `json:"rss"`
		Rounds           []round   `json:"rounds"`
	} `json:"sizes"`
}

// round is a later convergence of the peer or the manager (the bench's -rounds); round 1 is the contender's
// own AvailableSeconds.
type round struct {
	Round            int       `json:"round"`
	AvailableSeconds []float64 `json:"availableSeconds"`
}

type sample struct {
	T   float64 `json:"t"`
	MiB float64 `json:"mib"`
}

var (
	colorLower    = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	colorPeer     = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	colorOperator = color.RGBA{R: 0x1b, G: 0x6a, B: 0xc9, A: 0xff}
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "charts: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: charts [-ext svg|png|pdf] bench-<time>.json ...") }
	ext := flag.String("ext", "svg", "format of the charts: svg, png or pdf")
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	for _, path := range flag.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var r report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		base := strings.TrimSuffix(path, ".json")
		for _, s := range r.Sizes {
			title := fmt.Sprintf("N=%d (%d objects), %s %s", s.Plan.N, 2*s.Plan.N, r.Date, r.Label)
			var lines []line
			for _, lb := range s.LowerBound {
				if lb.Workers == s.LowerBoundW && len(lb.Done) > 0 {
					lines = append(lines, line{name: fmt.Sprintf("lower bound (%d workers)", lb.Workers), xy: steps(lb.Done), color: colorLower})
				}
			}
			if s.Peer != nil {
				lines = append(lines, roundLines("peer (tutorial style)", s.Peer.AvailableSeconds, s.Peer.Rounds, colorPeer)...)
			}
			lines = append(lines, roundLines("operator101", s.AvailableSeconds, s.Rounds, colorOperator)...)
			out := fmt.Sprintf("%s-n%d-available.%s", base, s.Plan.N, *ext)
			if err := draw(out, "Objects Available, "+title, "seconds from the first create", "objects Available", lines, true); err != nil {
				return err
			}
			fmt.Println(out)

			lines = nil
			if s.Peer != nil && len(s.Peer.RSS) > 0 {
				lines = append(lines, line{name: "peer (tutorial style)", xy: rssXY(s.Peer.RSS), color: colorPeer})
			}
			if len(s.RSS) > 0 {
				lines = append(lines, line{name: "operator101 manager", xy: rssXY(s.RSS), color: colorOperator})
			}
			if len(lines) == 0 {
				continue
			}
			out = fmt.Sprintf("%s-n%d-rss.%s", base, s.Plan.N, *ext)
			if err := draw(out, "Resident memory (VmRSS), "+title, "seconds from the first create", "MiB", lines, false); err != nil {
				return err
			}
			fmt.Println(out)
		}
	}
	return nil
}

type line struct {
	name  string
	xy    plotter.XYs
	color color.Color
	// dashed: a later round of a contender, in the color of its first.
	dashed bool
}

// roundLines are a contender's curves of objects Available: round 1 (first, its own completions) solid, each
// later round with completions dashed; the names say the round when there is more than one.
func roundLines(name string, first []float64, rounds []round, c color.Color) []line {
	var later []round
	for _, r := range rounds {
		if r.Round > 1 && len(r.AvailableSeconds) > 0 {
			later = append(later, r)
		}
	}
	if len(later) == 0 {
		return []line{{name: name, xy: steps(first), color: c}}
	}
	out := []line{{name: name + ", round 1", xy: steps(first), color: c}}
	for _, r := range later {
		out = append(out, line{name: fmt.Sprintf("%s, round %d", name, r.Round), xy: steps(r.AvailableSeconds), color: c, dashed: true})
	}
	return out
}

// steps is the count of objects done over time: a step up at each completion, from (0, 0).
func steps(done []float64) plotter.XYs {
	xy := make(plotter.XYs, 0, 2*len(done)+1)
	xy = append(xy, plotter.XY{X: 0, Y: 0})
	for i, t := range done {
		xy = append(xy, plotter.XY{X: t, Y: float64(i)}, plotter.XY{X: t, Y: float64(i + 1)})
	}
	return xy
}

func rssXY(s []sample) plotter.XYs {
	xy := make(plotter.XYs, 0, len(s))
	for _, p := range s {
		xy = append(xy, plotter.XY{X: p.T, Y: p.MiB})
	}
	return xy
}

func draw(path, title, xLabel, yLabel string, lines []line, legendTopLeft bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = legendTopLeft, legendTopLeft
	if legendTopLeft {
		p.Legend.XOffs, p.Legend.YOffs = 2*vg.Millimeter, -vg.Millimeter
	} else {
		p.Legend.XOffs, p.Legend.YOffs = -vg.Millimeter, 2*vg.Millimeter
	}
	for _, l := range lines {
		pl, err := plotter.NewLine(l.xy)
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		pl.Color = l.color
		pl.Width = vg.Points(1.5)
		if l.dashed {
			pl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(pl)
		p.Legend.Add(l.name, pl)
	}
	return p.Save(20*vg.Centimeter, 11*vg.Centimeter, path)
}
