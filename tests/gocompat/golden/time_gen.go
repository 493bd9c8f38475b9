//go:build ignore

// time_gen prints golden outputs of time.Time.Format and time.ParseInLocation with
// reference layouts as JSON lines: go run time_gen.go emit.go > time.jsonl
package main

import (
	"time"
)

var layouts = []string{
	time.Layout, time.ANSIC, time.UnixDate, time.RubyDate, time.RFC822, time.RFC822Z, time.RFC850,
	time.RFC1123, time.RFC1123Z, time.RFC3339, time.RFC3339Nano, time.Kitchen, time.Stamp,
	time.StampMilli, time.StampMicro, time.StampNano, time.DateTime, time.DateOnly, time.TimeOnly,
	"2006-01-02T15:04:05.000Z07:00", "2006-01-02 15:04:05.999999999 -0700 MST", "02/01/06 3:4:5 pm",
	"Jan _2 Monday Mon January", "__2 002 .000 ,999 .9 .99", "-07 -07:00 -0700 -07:00:00 -070000",
	"Z07 Z0700 Z07:00 Z07:00:00 Z070000", "06 2006 1 01 Jan January 2 02 _2", "15 3 03 4 04 5 05 PM pm",
	"literal text", "", "2006-01-02T15:04:05.00000000000Z", "MST", "January 2, 2006 at 3:04pm (MST)",
	"20060102150405", "2006-002", "15:04:05,000", "Mon Jan 2", "0601021504",
}

var zones = []string{"UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"}

var instants = []time.Time{
	time.Unix(0, 0), time.Unix(1700000000, 123456789), time.Unix(1700000000, 100000000),
	time.Unix(1700000000, 0), time.Unix(951782400, 5), time.Unix(-86400*365*70, 0),
	time.Unix(1710054000, 0), time.Unix(4102444799, 999999999), time.Unix(1262304000, 120000),
	time.Unix(1689000000, 7000000), time.Unix(-1, 0),
}

func formats() {
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			panic(err)
		}
		for _, t := range instants {
			texts := []string{}
			for _, layout := range layouts {
				texts = append(texts, t.In(loc).Format(layout))
			}
			emit(map[string]any{"fn": "Format", "zone": zone, "sec": t.Unix(), "nsec": t.Nanosecond(), "layouts": layouts, "out": texts})
		}
	}
}

var parses = [][2]string{
	{time.RFC3339, "2023-11-14T22:13:20Z"}, {time.RFC3339, "2023-11-14T22:13:20+05:30"},
	{time.RFC3339, "2023-11-14T22:13:20.123456789-07:00"}, {time.RFC3339Nano, "2023-11-14T22:13:20.5Z"},
	{time.RFC3339, "2023-11-14 22:13:20Z"}, {time.RFC3339, "2023-02-30T00:00:00Z"},
	{time.RFC3339, "2023-13-01T00:00:00Z"}, {time.RFC3339, "2024-02-29T24:00:00Z"},
	{time.DateTime, "2023-11-14 22:13:20"}, {time.DateOnly, "2024-02-29"}, {time.DateOnly, "2023-02-29"},
	{time.DateOnly, "2023-1-05"}, {time.TimeOnly, "25:00:00"}, {time.Kitchen, "3:04PM"},
	{time.Kitchen, "13:04PM"}, {time.Kitchen, "3:04AM"}, {time.Kitchen, "12:00AM"},
	{time.RFC1123, "Tue, 14 Nov 2023 22:13:20 UTC"}, {time.RFC1123, "Tue, 14 Nov 2023 22:13:20 EST"},
	{time.RFC1123, "Wed, 14 Nov 2023 22:13:20 GMT"}, {time.RFC1123Z, "Tue, 14 Nov 2023 22:13:20 +0100"},
	{time.RFC850, "Tuesday, 14-Nov-23 22:13:20 UTC"}, {time.ANSIC, "Tue Nov  4 22:13:20 2023"},
	{time.ANSIC, "Tue Nov 14 22:13:20 2023"}, {time.UnixDate, "Tue Nov 14 22:13:20 PST 2023"},
	{time.StampMilli, "Nov 14 22:13:20.123"}, {"2006-002", "2023-318"}, {"2006-002", "2023-366"},
	{"2006-01-02T15:04:05.000Z07:00", "2023-11-14T22:13:20.12Z"}, {"2006-01-02 15:04:05.999", "2023-11-14 22:13:20.123456"},
	{"2006-01-02 15:04:05", "2023-11-14 22:13:20.5"}, {"02 Jan 06 15:04 MST", "14 Nov 23 22:13 GMT+3"},
	{"Jan _2", "Nov  4"}, {"Jan _2", "Nov 14"}, {"January 2 2006", "november 14 2023"},
	{"2006-01-02", "2023-11-14 extra"}, {"2006-01-02", ""}, {"2006-01-02", "x"}, {"", ""}, {"", "x"},
	{"15:04:05 -0700", "22:13:20 +2400"}, {"15:04:05 Z07:00", "22:13:20 Z"}, {"15:04:05 Z07:00", "22:13:20 +01:00"},
	{"2006-01-02T15:04:05", "0000-01-01T00:00:00"}, {"06-01-02", "69-01-01"}, {"06-01-02", "68-12-31"},
	{"2006-01-02 3PM", "2023-11-14 3PM"}, {"2006-01-02 3pm", "2023-11-14 3PM"}, {"20060102150405", "20231114221320"},
	{"2006-01-02 15:04:05 MST", "2023-07-01 12:00:00 EDT"}, {"2006-01-02 15:04:05 MST", "2023-01-01 12:00:00 EDT"},
	{"2006-01-02 15:04:05 MST", "2023-07-01 12:00:00 IST"}, {"Mon 2006-01-02", "Fri 2023-11-14"},
}

func parsesIn() {
	for _, zone := range []string{"UTC", "America/New_York"} {
		loc, _ := time.LoadLocation(zone)
		for _, pair := range parses {
			t, err := time.ParseInLocation(pair[0], pair[1], loc)
			record := map[string]any{"fn": "ParseInLocation", "zone": zone, "layout": pair[0], "in": pair[1]}
			if err != nil {
				record["err"] = err.Error()
			} else {
				name, offset := t.Zone()
				record["sec"], record["nsec"], record["offset"], record["name"] = t.Unix(), t.Nanosecond(), offset, name
			}
			emit(record)
		}
	}
}

func main() {
	formats()
	parsesIn()
}
