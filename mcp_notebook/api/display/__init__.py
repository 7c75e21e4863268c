"""What people see, through the `FrontEnd` seam (`frontend`): the plain-script default, and the
things it shows as plain data, text and HTML (log and subscription panels, sequence diagrams)."""
