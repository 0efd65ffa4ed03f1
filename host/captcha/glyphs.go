package captcha

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// strokeFont draws every character of Alphabet as polylines on a 10×14 grid
// (x right, y down); "|" separates the strokes of one glyph. It is the
// outline font of TypePath challenges.
var strokeFont = map[byte]string{
	'A': "0,14 5,0 10,14|2,9 8,9",
	'B': "0,0 0,14 7,14 10,11 10,9 7,7 0,7|0,0 7,0 9,2 9,5 7,7",
	'C': "10,2 8,0 2,0 0,2 0,12 2,14 8,14 10,12",
	'D': "0,0 0,14 6,14 10,10 10,4 6,0 0,0",
	'E': "10,0 0,0 0,14 10,14|0,7 7,7",
	'F': "10,0 0,0 0,14|0,7 7,7",
	'G': "10,2 8,0 2,0 0,2 0,12 2,14 8,14 10,12 10,8 6,8",
	'H': "0,0 0,14|10,0 10,14|0,7 10,7",
	'J': "10,0 10,11 7,14 3,14 0,11",
	'K': "0,0 0,14|10,0 0,8|3,6 10,14",
	'M': "0,14 0,0 5,8 10,0 10,14",
	'N': "0,14 0,0 10,14 10,0",
	'P': "0,14 0,0 8,0 10,2 10,5 8,7 0,7",
	'Q': "2,0 8,0 10,2 10,12 8,14 2,14 0,12 0,2 2,0|6,10 10,14",
	'R': "0,14 0,0 8,0 10,2 10,5 8,7 0,7|5,7 10,14",
	'S': "10,2 8,0 2,0 0,2 0,5 2,7 8,7 10,9 10,12 8,14 2,14 0,12",
	'T': "0,0 10,0|5,0 5,14",
	'U': "0,0 0,12 2,14 8,14 10,12 10,0",
	'V': "0,0 5,14 10,0",
	'W': "0,0 2,14 5,6 8,14 10,0",
	'X': "0,0 10,14|10,0 0,14",
	'Y': "0,0 5,7 10,0|5,7 5,14",
	'Z': "0,0 10,0 0,14 10,14",
	'2': "0,2 2,0 8,0 10,2 10,5 0,14 10,14",
	'3': "0,1 2,0 8,0 10,2 10,5 8,7 4,7|8,7 10,9 10,12 8,14 2,14 0,13",
	'4': "8,14 8,0 0,10 10,10",
	'5': "10,0 0,0 0,6 7,6 10,8 10,12 8,14 2,14 0,12",
	'6': "9,1 7,0 3,0 0,3 0,12 2,14 8,14 10,12 10,9 8,7 0,7",
	'7': "0,0 10,0 4,14",
	'8': "2,7 0,5 0,2 2,0 8,0 10,2 10,5 8,7 2,7 0,9 0,12 2,14 8,14 10,12 10,9 8,7",
	'9': "10,7 2,7 0,5 0,2 2,0 8,0 10,2 10,11 7,14 3,14 1,13",
}

// renderPaths draws answer (characters of Alphabet) as stroked outlines.
func renderPaths(answer string) (string, error) {
	p, err := newPainter()
	if err != nil {
		return "", err
	}
	return p.drawPaths(answer), nil
}

func (p *painter) drawPaths(answer string) string {
	r, b := p.rnd, &p.b
	n := len(answer)
	width := p.background(n, 420)
	for _, i := range r.Perm(n) {
		// the glyph's top-left corner, its scale and rotation
		scale := 1.55 + r.Float64()*0.35
		x := padX + glyphStep*float64(i) + (glyphStep-10*scale)/2 + p.jitter(3)
		y := (height-14*scale)/2 + p.jitter(3)
		fmt.Fprintf(b, `<path transform="rotate(%.0f %.1f %.1f)" d="`, p.jitter(22), x+5*scale, y+7*scale)
		for _, stroke := range strings.Split(strokeFont[answer[i]], "|") {
			for j, pt := range strings.Fields(stroke) {
				px, py, _ := strings.Cut(pt, ",")
				fx, _ := strconv.ParseFloat(px, 64)
				fy, _ := strconv.ParseFloat(py, 64)
				cmd := "L"
				if j == 0 {
					cmd = "M"
				}
				fmt.Fprintf(b, "%s%.1f %.1f", cmd, x+(fx+p.jitter(0.45))*scale, y+(fy+p.jitter(0.45))*scale)
			}
		}
		fmt.Fprintf(b, `" stroke="%s" stroke-width="%.1f" stroke-linecap="round" stroke-linejoin="round" fill="none"/>`,
			p.rgb(20, 140), 2+r.Float64()*0.8)
	}
	p.curve(width)
	b.WriteString(`</svg>`)
	return b.String()
}

// randomSum draws a TypeMath question and its answer: a+b (1..20 each),
// a-b (a >= b, 1..20) or a×b (2..9 each), drawn with crypto/rand.
func randomSum() (shown, answer string, err error) {
	pick := func(lo, hi int64) (int64, error) {
		v, err := rand.Int(rand.Reader, big.NewInt(hi-lo+1))
		if err != nil {
			return 0, err
		}
		return lo + v.Int64(), nil
	}
	op, err := pick(0, 2)
	if err != nil {
		return "", "", err
	}
	lo, hi := int64(1), int64(20)
	if op == 2 {
		lo, hi = 2, 9
	}
	a, err := pick(lo, hi)
	if err != nil {
		return "", "", err
	}
	c, err := pick(lo, hi)
	if err != nil {
		return "", "", err
	}
	switch op {
	case 0:
		return fmt.Sprintf("%d+%d=?", a, c), strconv.FormatInt(a+c, 10), nil
	case 1:
		if a < c {
			a, c = c, a
		}
		return fmt.Sprintf("%d-%d=?", a, c), strconv.FormatInt(a-c, 10), nil
	default:
		return fmt.Sprintf("%d×%d=?", a, c), strconv.FormatInt(a*c, 10), nil
	}
}
