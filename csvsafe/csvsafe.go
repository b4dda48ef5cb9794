// Package csvsafe writes CSV that is inert when opened in a spreadsheet:
// a cell that starts with =, +, -, @, a tab or a carriage return would be
// read as a formula (OWASP's "CSV injection"), and an address such as
// =cmd|'/C calc'!A0@example.com is a valid one. Such a cell is written
// with a leading apostrophe, which spreadsheets show as text and do not
// display. Every CSV the bridge writes goes through it.
package csvsafe

import (
	"encoding/csv"
	"io"
	"strings"
)

// Writer is a csv.Writer whose cells are made inert.
type Writer struct {
	w    *csv.Writer
	cell []string
}

// NewWriter writes CSV to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record, each cell through Cell.
func (w *Writer) Write(record []string) error {
	w.cell = w.cell[:0]
	for _, c := range record {
		w.cell = append(w.cell, Cell(c))
	}
	return w.w.Write(w.cell)
}

// Flush writes what is buffered; Error says whether a write failed.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports an error of an earlier Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }

// Cell is s as a spreadsheet reads it as text: with a leading apostrophe
// when it starts with a character that would make it a formula.
func Cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
