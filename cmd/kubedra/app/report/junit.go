package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// JUnit XML in the shape CI systems read (Jenkins, GitLab, Azure, the
// common JUnit.xsd): <testsuites> holds one <testsuite> per file, and each
// finding is a <testcase> that passes, fails (<failure>) or is <skipped>
// when a kubedra.io/ignore annotation or .kubedra.yaml ignores it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes c as JUnit XML. Inputs that could not be read (skipped by
// scan) are test cases with an <error>, so they stay visible in CI. With
// nothing found, the document has one empty suite: valid, and a CI test
// view shows that kubedra ran.
func JUnit(w io.Writer, c Check) error {
	suites := junitSuites{Name: "kubedra check"}
	byFile := map[string]int{}
	suite := func(file string) *junitSuite {
		name := displayPath(file)
		if file == "-" {
			name = "<stdin>"
		}
		i, ok := byFile[name]
		if !ok {
			i = len(suites.Suites)
			byFile[name] = i
			suites.Suites = append(suites.Suites, junitSuite{Name: name, Time: "0"})
		}
		return &suites.Suites[i]
	}
	for i, it := range c.Report.Findings {
		s := suite(it.File)
		tc := junitCase{Name: caseName(it), Classname: classname(it), Time: "0"}
		switch {
		case it.Ignored != "":
			tc.Skipped = &junitSkipped{Message: "ignored: " + it.Ignored}
			s.Skipped++
		case c.failing(i):
			tc.Failure = &junitProblem{Message: it.Message(), Type: it.RuleID(),
				Text: fmt.Sprintf("%s\nrule: %s\ngate: --fail-on %s\n\n%s\n", location(it), it.RuleID(), c.FailOn, statusHelp(it.Status))}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
		if it.IgnoreInvalid {
			s.Tests++
			s.Failures++
			s.Cases = append(s.Cases, junitCase{Name: caseName(it) + " ignore annotation", Classname: classname(it), Time: "0",
				Failure: &junitProblem{Message: plan.IgnoreReasonMessage, Type: plan.IgnoreReasonRuleID, Text: location(it) + "\n"}})
		}
	}
	for _, sk := range c.Report.Skipped {
		s := suite(sk.File)
		loc := displayPath(sk.File)
		if sk.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, sk.Line)
		}
		s.Tests++
		s.Errors++
		s.Cases = append(s.Cases, junitCase{Name: "read " + loc, Classname: "kubedra.input", Time: "0",
			Error: &junitProblem{Message: sk.Reason, Type: "skipped-input", Text: loc + ": " + sk.Reason + "\n"}})
	}
	if len(suites.Suites) == 0 {
		suites.Suites = append(suites.Suites, junitSuite{Name: "kubedra", Time: "0", Cases: []junitCase{}})
	}
	for _, s := range suites.Suites {
		suites.Tests += s.Tests
		suites.Failures += s.Failures
		suites.Errors += s.Errors
		suites.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// caseName names a test case after what was checked: the container's
// request in its workload.
func caseName(it plan.Item) string {
	if it.Mapping.Upgrade != nil {
		return fmt.Sprintf("%s %s", workload(it), it.Resource)
	}
	return fmt.Sprintf("%s container %s %s", workload(it), it.Container, it.Resource)
}

// classname groups cases the way JUnit viewers expect a dotted name:
// kind.namespace.name.
func classname(it plan.Item) string {
	parts := []string{strings.ToLower(it.Kind)}
	if it.Namespace != "" {
		parts = append(parts, it.Namespace)
	}
	parts = append(parts, it.Name)
	return strings.Join(parts, ".")
}
